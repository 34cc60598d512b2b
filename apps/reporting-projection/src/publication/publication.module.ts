import { Module } from '@nestjs/common';
import { PublicationService } from './publication.service.js';
import { RollupQueryRepository } from './rollup-query.repository.js';
import { SnapshotBuilder } from './snapshot-builder.service.js';
import { SnapshotRepository } from './snapshot.repository.js';

/** Publishes snapshots of the rollups: every interval, and first ones on demand. */
@Module({
  providers: [RollupQueryRepository, SnapshotBuilder, SnapshotRepository, PublicationService],
  exports: [PublicationService, SnapshotRepository],
})
export class PublicationModule {}
