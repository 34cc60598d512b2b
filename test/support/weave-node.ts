import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';

/** The library's types come from its entry source; its values from the built ESM file. */
export type WeaveNode = typeof import('../../libs/weave-node/src/index.js');

const LIB = join(process.cwd(), 'libs', 'weave-node');

/** The BUILT @vendor/weave-node (libs/weave-node/dist), built first when missing or older than its sources. */
export async function loadBuiltWeaveNode(): Promise<WeaveNode> {
  execFileSync(process.execPath, [join(LIB, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
  return (await import(pathToFileURL(join(LIB, 'dist', 'esm', 'index.mjs')).href)) as WeaveNode;
}

/** A request as a recording server received it. */
export interface Arrival {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** Set when the client closed the connection before the server answered. */
  closedByClient: boolean;
}

/** How a recording server answers the `attempt`-th request (1 for the first). */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, attempt: number, body: string) => void;

export interface RecordingServer {
  url: string;
  seen: Arrival[];
  close(): Promise<void>;
}

/**
 * In a spec file: `server(handler)` starts a real HTTP server on a free port that records every
 * request it receives (what the client sent, when, and whether the client hung up) and answers
 * with `handler`. Every server is closed after the file's tests.
 */
export function useRecordingServers(): (handler: Handler) => Promise<RecordingServer> {
  const servers: RecordingServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  return async (handler) => {
    const seen: Arrival[] = [];
    const httpServer = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const arrival: Arrival = { method: req.method || '', url: req.url || '', headers: req.headers, body, at: Date.now(), closedByClient: false };
        seen.push(arrival);
        res.on('close', () => {
          if (!res.writableFinished) arrival.closedByClient = true;
        });
        handler(req, res, seen.length, body);
      });
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const { port } = httpServer.address() as AddressInfo;
    const started: RecordingServer = {
      url: `http://127.0.0.1:${port}`,
      seen,
      close: () =>
        new Promise<void>((resolve) => {
          httpServer.closeAllConnections();
          httpServer.close(() => resolve());
        }),
    };
    servers.push(started);
    return started;
  };
}

/** Answers with a JSON body. */
export function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/** Asserts `secret` appears in no rendering of an error: message, string, stack, inspect, JSON. */
export function expectNotInError(error: Error, secret: string): void {
  for (const text of [error.message, String(error), error.stack || '', inspect(error, { showHidden: true, depth: 5 }), JSON.stringify(error)]) {
    expect(text).not.toContain(secret);
  }
}
