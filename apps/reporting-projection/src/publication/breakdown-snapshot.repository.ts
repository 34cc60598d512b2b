import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { BreakdownScopeRef, BreakdownSnapshot } from './breakdown-snapshot.js';
import { SplitSnapshotRepository } from './split-snapshot.repository.js';

/** Registered breakdown scopes and their published snapshots (reporting.breakdown_scope, reporting.breakdown_snapshot). */
@Injectable()
export class BreakdownSnapshotRepository extends SplitSnapshotRepository<BreakdownScopeRef, BreakdownSnapshot> {
  constructor(dataSource: DataSource) {
    super(dataSource, { name: 'breakdown', key: 'by', keyColumn: 'dimension', content: ['totals', 'tops'], chunk: 200 });
  }
}
