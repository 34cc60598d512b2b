import type { NatsConnection } from '@nats-io/transport-node';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, TIME_RANGES, type Report, type ReportReply, type TimeRange } from '#libs/contracts';
import { NatsRpcClient } from '#libs/nats';
import { waitFor } from '../../support/index.js';

// Asking reporting-projection for reports over NATS, as the gateway does.

export interface Scope {
  agent_id: string;
  traffic: 'live' | 'test';
  time_range: TimeRange;
}

export function allScopes(agents: string[]): Scope[] {
  return agents.flatMap((agent_id) => (['live', 'test'] as const).flatMap((traffic) => TIME_RANGES.map((time_range) => ({ agent_id, traffic, time_range }))));
}

/** A report request through the Nest client; a failure (an error reply, no answer in time) rejects. */
export function requestReport(connection: NatsConnection, scope: Scope, timeoutMs = 5000): Promise<ReportReply> {
  return firstValueFrom(new NatsRpcClient({ connection, timeoutMs }).send<ReportReply>(RpcSubjects.reportGet, scope));
}

/** Asks for every scope once, so they are prepared and published by every cycle from now on. */
export async function registerScopes(connection: NatsConnection, scopes: Scope[]): Promise<void> {
  for (const scope of scopes) {
    await waitFor(() => requestReport(connection, scope), { timeoutMs: 30000, what: `reporting to answer for ${scope.agent_id}` });
  }
}

/** The reports of every scope, all from publications that started at or after `since`. */
export async function reportsPublishedAfter(connection: NatsConnection, scopes: Scope[], since: Date, timeoutMs = 60000): Promise<Report[]> {
  const reports: Report[] = [];
  for (const scope of scopes) {
    reports.push(
      await waitFor(
        async () => {
          const report = await requestReport(connection, scope);
          if (report.status === 'preparing') return undefined;
          return Date.parse(report.updated_at) >= since.getTime() ? report : undefined;
        },
        { timeoutMs, intervalMs: 200, what: `a report of ${scope.agent_id}/${scope.traffic}/${scope.time_range} published after ${since.toISOString()}` },
      ),
    );
  }
  return reports;
}
