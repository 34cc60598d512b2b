import { PassThrough } from 'node:stream';
import { PinoNestLogger, createLogger, prettyWanted } from '#libs/observability';

/** LOG_FORMAT and what Nest says while it starts (libs/observability). */
describe('service logs', () => {
  it('are pretty on a terminal with LOG_FORMAT auto, JSON on anything else, as LOG_FORMAT says otherwise', () => {
    expect(prettyWanted('auto', { isTTY: true })).toBe(true);
    expect(prettyWanted('auto', { isTTY: false })).toBe(false);
    expect(prettyWanted('auto', {})).toBe(false);
    expect(prettyWanted('json', { isTTY: true })).toBe(false);
    expect(prettyWanted('pretty', { isTTY: false })).toBe(true);
  });

  it("log Nest's module and route lines at debug, and everything else Nest says at its own level", () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)));
    const nest = new PinoNestLogger(createLogger('gateway', 'info', stream));
    nest.log('AppModule dependencies initialized', 'InstanceLoader');
    nest.log('Mapped {/agent/reporting, GET} route', 'RouterExplorer');
    nest.log('ReportingController {/agent/reporting}:', 'RoutesResolver');
    nest.log('Nest application successfully started', 'NestApplication');
    nest.log('a line of the service', 'ReportingService');
    nest.warn('a warning', 'RoutesResolver');
    expect(lines.map(({ level, msg, context }) => ({ level, msg, context }))).toEqual([
      { level: 'info', msg: 'a line of the service', context: 'ReportingService' },
      { level: 'warn', msg: 'a warning', context: 'RoutesResolver' },
    ]);
    lines.length = 0;
    new PinoNestLogger(createLogger('gateway', 'debug', stream)).log('Mapped {/agent/reporting, GET} route', 'RouterExplorer');
    expect(lines).toEqual([expect.objectContaining({ level: 'debug', msg: 'Mapped {/agent/reporting, GET} route' })]);
  });
});
