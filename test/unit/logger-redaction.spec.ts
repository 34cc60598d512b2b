import { Writable } from 'node:stream';
import { createLogger } from '#libs/observability';

/** Credentials never reach a log line, whatever object a caller logs. */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('log redaction', () => {
  it('blanks authorization headers, keys, tokens and connection URLs', () => {
    const { lines, stream } = capture();
    const logger = createLogger('test', 'info', stream);
    logger.info(
      {
        req: { headers: { authorization: 'Bearer sk_live_secretsecretsecretsecretsecret12' } },
        request: { api_key: 'sk_test_abc', token: 'eyJhbGciOi.x.y' },
        DATABASE_URL: 'postgres://user:pw@db/weave',
        TRACKING_SIGNING_SECRET: 's3cr3t',
      },
      'request',
    );
    const line = lines.join('');
    for (const secret of ['sk_live_secret', 'sk_test_abc', 'eyJhbGciOi', 'user:pw', 's3cr3t']) expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
  });
});
