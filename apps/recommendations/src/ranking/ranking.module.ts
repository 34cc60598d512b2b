import { Module } from '@nestjs/common';
import { AdSearchRepository } from './ad-search.repository.js';

/** The catalog search that ranks candidate ads for a question. */
@Module({
  providers: [AdSearchRepository],
  exports: [AdSearchRepository],
})
export class RankingModule {}
