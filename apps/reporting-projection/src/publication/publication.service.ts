import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BroadcastSubjects, Durables, Streams, encodeReportsPublished, type ReportsPublishedMessage, type Traffic } from '#libs/contracts';
import { LOGGER } from '#libs/bootstrap';
import { NatsClient } from '#libs/nats';
import { counter, gauge, histogram, type Logger } from '#libs/observability';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import type { QueryRunner } from 'typeorm';
import { BreakdownBuilder } from './breakdown-builder.service.js';
import { BreakdownSnapshotRepository } from './breakdown-snapshot.repository.js';
import type { BreakdownScopeRef, BreakdownSnapshot } from './breakdown-snapshot.js';
import { measureProcessedThrough } from './processed-through.js';
import { SeriesBuilder } from './series-builder.service.js';
import { SeriesSnapshotRepository } from './series-snapshot.repository.js';
import type { SeriesScopeRef, SeriesSnapshot } from './series-snapshot.js';
import { SnapshotBuilder } from './snapshot-builder.service.js';
import { SnapshotRepository } from './snapshot.repository.js';
import { reportScopeKey, type ScopeRef, type Snapshot } from './snapshot.js';

const PUBLICATION_LOCK = 'reporting:publication';

const publicationSeconds = histogram('weave_publication_seconds', 'Duration of a publication cycle', ['outcome'], [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]);
const publicationFailures = counter('weave_publication_failures_total', 'Publication cycles that failed (the last snapshots are kept)');
const publishedScopes = gauge('weave_published_scopes', 'Scopes published by the last cycle');
/**
 * Every replica reads the last published cutoff each interval and the age is computed at scrape
 * time, so it keeps growing while publication is stuck, whoever the publisher was.
 */
let lastPublishedCutoff: Date | undefined;
gauge('weave_report_age_seconds', 'now - processed_through of the last completed publication', [], function () {
  if (lastPublishedCutoff) this.set((Date.now() - lastPublishedCutoff.getTime()) / 1000);
});

export type CycleOutcome = 'published' | 'not-leader' | 'recently-published' | 'failed';

/**
 * Publishes a snapshot of every prepared scope, and the series and breakdowns of every
 * registered series and breakdown scope, once per interval. Both are read in one REPEATABLE READ transaction (one database
 * snapshot), so that a series' buckets sum to the report of its scope at the same
 * processed_through while ingestion keeps committing; they are then written in one transaction.
 * Every replica runs the timer;
 * a PostgreSQL advisory lock elects the publisher of a cycle and the time of the last completed
 * cycle keeps replicas with out-of-phase timers from publishing twice. The lock is tied to a
 * connection, so a publisher that dies releases it at once and the next replica's timer takes
 * over within an interval.
 */
// Raw SQL: the advisory lock, work_mem and the one-row publication state of the hot path; no entities in schema reporting.
@Injectable()
export class PublicationService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private cycle?: Promise<CycleOutcome>;
  /** Per report scope: the preparation running, and at most one queued after it (for scopes registered meanwhile). */
  private readonly preparing = new Map<string, { running: Promise<void>; queued?: Promise<void> }>();
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly nats: NatsClient,
    private readonly builder: SnapshotBuilder,
    private readonly snapshots: SnapshotRepository,
    private readonly seriesBuilder: SeriesBuilder,
    private readonly series: SeriesSnapshotRepository,
    private readonly breakdownBuilder: BreakdownBuilder,
    private readonly breakdowns: BreakdownSnapshotRepository,
    private readonly env: ReportingProjectionEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const interval = this.env.REPORTING_PUBLISH_INTERVAL_MS;
    this.timer = setInterval(() => void this.tick(), interval);
    setTimeout(() => void this.tick(), Math.min(1000, interval)).unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.cycle;
    await Promise.allSettled([...this.preparing.values()].flatMap((p) => [p.running, p.queued]));
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.cycle) return;
    this.cycle = this.runCycle();
    try {
      await this.cycle;
      const [state] = await this.dataSource.query(`SELECT processed_through FROM reporting.publication_state WHERE id = 1`);
      if (state?.processed_through) lastPublishedCutoff = state.processed_through;
    } catch {
      // the database is unreachable: the age keeps growing from the last known cutoff
    } finally {
      this.cycle = undefined;
    }
  }

  /** One publication cycle; `force` skips the recently-published check (tests, benchmarks). */
  async runCycle(force = false): Promise<CycleOutcome> {
    const end = publicationSeconds.startTimer();
    const runner = this.dataSource.createQueryRunner();
    let outcome: CycleOutcome = 'failed';
    try {
      await runner.connect();
      const [{ locked }] = await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [PUBLICATION_LOCK]);
      if (!locked) return (outcome = 'not-leader');
      // Aggregating every platform at once wants more sort/hash memory than a request does.
      await runner.query(`SET work_mem = '64MB'`);
      try {
        const startedAt = new Date();
        const [state] = await runner.query(`SELECT processed_through, last_completed_at FROM reporting.publication_state WHERE id = 1`);
        const interval = this.env.REPORTING_PUBLISH_INTERVAL_MS;
        if (!force && state.last_completed_at && startedAt.getTime() - state.last_completed_at.getTime() < interval * 0.8) {
          return (outcome = 'recently-published');
        }
        try {
          const measured = await measureProcessedThrough(this.nats.manager, Streams.events, Durables.reportingProjection);
          const previous: Date | null = state.processed_through;
          const processedThrough = previous && previous > measured ? previous : measured;
          const scopes = await this.snapshots.allScopes();
          const seriesScopes = await this.series.allScopes();
          const breakdownScopes = await this.breakdowns.allScopes();
          const { snapshots, series, breakdowns } = await this.readOneSnapshot(runner, scopes, seriesScopes, processedThrough, startedAt, breakdownScopes);
          await runner.startTransaction();
          await this.snapshots.save(snapshots, runner.manager);
          await this.series.save(series, runner.manager);
          await this.breakdowns.save(breakdowns, runner.manager);
          await runner.query(
            `UPDATE reporting.publication_state SET processed_through = $1, last_started_at = $2, last_completed_at = now(), last_error = NULL WHERE id = 1`,
            [processedThrough.toISOString(), startedAt.toISOString()],
          );
          await runner.commitTransaction();
          publishedScopes.set(snapshots.length);
          lastPublishedCutoff = processedThrough;
          this.announce();
          return (outcome = 'published');
        } catch (error) {
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
          publicationFailures.inc();
          this.logger.error({ err: error }, 'publication failed; the last snapshots stay published');
          await runner
            .query(`UPDATE reporting.publication_state SET last_error = $1 WHERE id = 1`, [String((error as Error).message).slice(0, 500)])
            .catch(() => undefined);
          return (outcome = 'failed');
        }
      } finally {
        await runner.query('RESET work_mem').catch(() => undefined);
        await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [PUBLICATION_LOCK]).catch(() => undefined);
      }
    } catch (error) {
      publicationFailures.inc();
      this.logger.error({ err: error }, 'publication cycle could not run');
      return (outcome = 'failed');
    } finally {
      end({ outcome });
      await runner.release().catch(() => undefined);
    }
  }

  /**
   * Reads the report snapshots and series of these scopes in one REPEATABLE READ, READ ONLY
   * transaction: every statement sees the same committed rollups, so each series sums to the
   * report of its scope although ingestion commits meanwhile (late events of old
   * recommendations move history). Written afterwards in a transaction of their own, so that a
   * concurrent preparation never turns the read into a serialization failure.
   */
  private async readOneSnapshot(
    runner: QueryRunner,
    scopes: ScopeRef[],
    seriesScopes: SeriesScopeRef[],
    processedThrough: Date,
    producedAt: Date,
    breakdownScopes: BreakdownScopeRef[] = [],
  ): Promise<{ snapshots: Snapshot[]; series: SeriesSnapshot[]; breakdowns: BreakdownSnapshot[] }> {
    await runner.startTransaction('REPEATABLE READ');
    try {
      await runner.query('SET TRANSACTION READ ONLY');
      // Before the snapshot is taken (LOCK takes none): a coarsening either committed before it or waits for this read to
      // end, so the minute and quarter rows read are one state, never a dropped week missing from both.
      await runner.query('LOCK TABLE ONLY reporting.rollup_minute, reporting.rollup_quarter IN ACCESS SHARE MODE');
      const snapshots = await this.builder.build(scopes, processedThrough, producedAt, runner.manager);
      const series = await this.seriesBuilder.build(seriesScopes, processedThrough, producedAt, runner.manager);
      const breakdowns = await this.breakdownBuilder.build(breakdownScopes, processedThrough, producedAt, runner.manager);
      await runner.commitTransaction();
      return { snapshots, series, breakdowns };
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    }
  }

  /**
   * Prepares a newly registered scope at the last published cutoff, so the caller's retry after
   * Retry-After finds it without waiting for the next cycle: the report of (platform, traffic,
   * range) together with every series registered for it, read in one snapshot (a new series
   * recomputes its report too, so the two agree). A request for the same report scope while one
   * runs queues one more run after it (a series registered meanwhile), never more. Once shutting
   * down (requests are still answered until the RPC server closes) it leaves the registered
   * scope to the next cycle of any replica.
   */
  prepare(scope: ScopeRef): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const key = reportScopeKey(scope);
    const current = this.preparing.get(key);
    if (current) {
      current.queued ??= current.running.then(() => this.runPreparation(key, scope));
      return current.queued;
    }
    const running = this.runPreparation(key, scope);
    this.preparing.set(key, { running });
    return running;
  }

  private async runPreparation(key: string, scope: ScopeRef): Promise<void> {
    // A queued run starting: it is now the one running.
    const entry = this.preparing.get(key);
    if (entry?.queued) this.preparing.set(key, { running: entry.queued });
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      const [state] = await runner.query(`SELECT processed_through FROM reporting.publication_state WHERE id = 1`);
      const processedThrough: Date =
        state?.processed_through ?? (await measureProcessedThrough(this.nats.manager, Streams.events, Durables.reportingProjection));
      const seriesScopes = await this.series.scopesOf(scope, runner.manager);
      const breakdownScopes = await this.breakdowns.scopesOf(scope, runner.manager);
      const { snapshots, series, breakdowns } = await this.readOneSnapshot(runner, [scope], seriesScopes, processedThrough, new Date(), breakdownScopes);
      await runner.startTransaction();
      await this.snapshots.save(snapshots, runner.manager);
      await this.series.save(series, runner.manager);
      await this.breakdowns.save(breakdowns, runner.manager);
      await runner.commitTransaction();
      this.announce({ agent_id: scope.agentId, traffic: scope.traffic as Traffic, time_range: scope.timeRange });
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      this.logger.warn({ err: error, scope }, 'first preparation failed; the next cycle will publish it');
    } finally {
      await runner.release().catch(() => undefined);
      const now = this.preparing.get(key);
      if (now && !now.queued) this.preparing.delete(key);
    }
  }

  /** Tells every replica to drop cached snapshots: all of them after a cycle, one scope's after its preparation. */
  private announce(scope?: ReportsPublishedMessage): void {
    try {
      this.nats.connection.publish(BroadcastSubjects.reportsPublished, encodeReportsPublished(scope));
    } catch (error) {
      this.logger.warn({ err: error }, 'could not announce the publication');
    }
  }

}
