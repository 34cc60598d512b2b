import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { SeriesScopeRef, SeriesSnapshot } from './series-snapshot.js';
import { SplitSnapshotRepository } from './split-snapshot.repository.js';

/** Registered series scopes and their published snapshots (reporting.series_scope, reporting.series_snapshot). */
@Injectable()
export class SeriesSnapshotRepository extends SplitSnapshotRepository<SeriesScopeRef, SeriesSnapshot> {
  constructor(dataSource: DataSource) {
    super(dataSource, { name: 'series', key: 'granularity', keyColumn: 'granularity', content: ['buckets'], chunk: 500 });
  }
}
