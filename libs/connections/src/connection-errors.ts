/**
 * One short phrase for why a connection to NATS, PostgreSQL or Redis failed, for a person to
 * read in a single line (the launcher's failures, the services' retry lines). The three
 * clients report the same causes differently: Node's socket error codes, nats.js error classes,
 * PostgreSQL SQLSTATEs, Redis error replies.
 */
export function describeConnectionError(error: unknown): string {
  const e = (error ?? {}) as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const message = String(e.message ?? error);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: nothing listens there';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'no answer (timed out)';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case '28P01':
      return 'password authentication failed';
    case '28000':
      return `not allowed to connect (${message})`;
    case '57P03':
      return 'the database system is starting up';
    case '53300':
      return 'too many connections';
  }
  if (e.name === 'TimeoutError' || /timeout|timed out/i.test(message)) return 'no answer (timed out)';
  if (/connection refused|ECONNREFUSED/i.test(message)) return 'connection refused: nothing listens there';
  if (/authorization violation|authentication/i.test(message)) return `authentication failed (${message})`;
  if (/NOAUTH|WRONGPASS/.test(message)) return `authentication failed (${message})`;
  if (/Connection terminated unexpectedly/i.test(message)) return 'the server closed the connection (is it the right kind of server?)';
  return message;
}

/** Whether nothing at all listens at the address, so that a server of our own could take it. */
export function isConnectionRefused(error: unknown): boolean {
  const e = (error ?? {}) as { code?: string; message?: string; cause?: { code?: string } };
  return e.code === 'ECONNREFUSED' || e.cause?.code === 'ECONNREFUSED' || /ECONNREFUSED|connection refused/i.test(String(e.message ?? ''));
}

/** Whether the server answered but refused the credentials (or their absence). */
export function isAuthorizationError(error: unknown): boolean {
  const e = (error ?? {}) as { name?: string; code?: string; message?: string };
  return e.name === 'AuthorizationError' || e.code === '28P01' || /authorization violation|authentication|NOAUTH|WRONGPASS/i.test(String(e.message ?? ''));
}
