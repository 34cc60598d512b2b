import { classifyResponse, type Outcome } from './outcome.js';

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  query?: Record<string, string | number | null | undefined>;
  body?: unknown;
  signal?: AbortSignal;
}

/** A downloaded file (the CSV export). */
export interface Download {
  blob: Blob;
  filename: string;
}

function filenameOf(disposition: string | null, fallback: string): string {
  const match = disposition ? /filename="([^"]+)"/i.exec(disposition) : null;
  return match?.[1] ?? fallback;
}

/**
 * The gateway's owner API, called with the signed-in owner's ID token in the Authorization
 * header (DESIGN §7) — never in a URL. A 401 tells the session to end (`onUnauthorized`).
 */
export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly idToken: () => string | undefined,
    private readonly onUnauthorized: () => void,
  ) {}

  url(path: string, query: RequestOptions['query'] = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== null && value !== undefined) params.set(name, String(value));
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  private async send(path: string, options: RequestOptions, accept: string): Promise<Response | { networkError: string }> {
    const token = this.idToken();
    const headers: Record<string, string> = { accept };
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.url(path, options.query), {
        method: options.method ?? 'GET',
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      return { networkError: (error as Error).message || 'network error' };
    }
  }

  async request<T>(path: string, options: RequestOptions = {}): Promise<Outcome<T>> {
    const response = await this.send(path, options, 'application/json, application/problem+json');
    if ('networkError' in response) return { kind: 'network', message: response.networkError };
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const outcome = classifyResponse<T>(response.status, response.headers.get('retry-after'), body);
    if (outcome.kind === 'unauthorized') this.onUnauthorized();
    return outcome;
  }

  /** A file download (CSV): fetched with the token in the header, handed to the browser as a Blob. */
  async download(path: string, options: RequestOptions & { fallbackName: string }): Promise<Outcome<Download>> {
    const response = await this.send(path, options, 'text/csv, application/problem+json');
    if ('networkError' in response) return { kind: 'network', message: response.networkError };
    if (response.status === 200) {
      return { kind: 'ok', status: 200, data: { blob: await response.blob(), filename: filenameOf(response.headers.get('content-disposition'), options.fallbackName) } };
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    const outcome = classifyResponse<Download>(response.status, response.headers.get('retry-after'), body);
    if (outcome.kind === 'unauthorized') this.onUnauthorized();
    return outcome;
  }
}
