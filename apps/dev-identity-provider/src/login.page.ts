const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Headers of the provider's own pages: nothing runs, nothing frames them, nothing leaks. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2430; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 8px; border: 1px solid #d5d9e0; }
  h1 { font-size: 1.4rem; margin-top: 0; }
  label { display: block; margin-top: 1rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #6b7280; border-radius: 4px; }
  button { margin-top: 1.5rem; padding: .6rem 1.2rem; font: inherit; background: #1d4ed8; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
  button:focus-visible, input:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
  .error { color: #9f1239; background: #fff1f2; border: 1px solid #fecdd3; padding: .5rem .75rem; border-radius: 4px; }
  .note { color: #4b5563; font-size: .9rem; }
`;

/** The sign-in form of one interaction (posted to `action`). */
export function loginPage(options: { action: string; clientName: string; error?: string; username?: string }): string {
  const error = options.error ? `<p class="error" role="alert" id="login-error">${escapeHtml(options.error)}</p>` : '';
  const describedBy = options.error ? ' aria-describedby="login-error"' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in – development identity provider</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Sign in to ${escapeHtml(options.clientName)}</h1>
<p class="note">Development identity provider: use the demo credentials printed by <code>npm start</code>.</p>
${error}
<form method="post" action="${escapeHtml(options.action)}" autocomplete="off">
<label for="username">Username</label>
<input id="username" name="username" type="text" required autofocus value="${escapeHtml(options.username ?? '')}"${describedBy}>
<label for="password">Password</label>
<input id="password" name="password" type="password" required${describedBy}>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>`;
}

/** A page for a request the provider cannot continue (an expired or unknown interaction). */
export function messagePage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body>
</html>`;
}
