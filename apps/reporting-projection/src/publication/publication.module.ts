import { Module } from '@nestjs/common';
import { BreakdownBuilder } from './breakdown-builder.service.js';
import { BreakdownSnapshotRepository } from './breakdown-snapshot.repository.js';
import { PublicationService } from './publication.service.js';
import { RollupQueryRepository } from './rollup-query.repository.js';
import { SeriesBuilder } from './series-builder.service.js';
import { SeriesQueryRepository } from './series-query.repository.js';
import { SeriesSnapshotRepository } from './series-snapshot.repository.js';
import { SnapshotBuilder } from './snapshot-builder.service.js';
import { SnapshotRepository } from './snapshot.repository.js';

/** Publishes snapshots and series of the rollups: every interval, and first ones on demand. */
@Module({
  providers: [RollupQueryRepository, SnapshotBuilder, SnapshotRepository, SeriesQueryRepository, SeriesBuilder, SeriesSnapshotRepository, BreakdownBuilder, BreakdownSnapshotRepository, PublicationService],
  exports: [PublicationService, SnapshotRepository, SeriesSnapshotRepository, BreakdownSnapshotRepository],
})
export class PublicationModule {}
