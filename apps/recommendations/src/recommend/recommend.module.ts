import { Module } from '@nestjs/common';
import { RankingModule } from '../ranking/ranking.module.js';
import { GeneratedEventsOutbox, GeneratedEventsRelay } from './generated-events.relay.js';
import { RecommendController } from './recommend.controller.js';
import { RecommendService } from './recommend.service.js';
import { RecommendationRepository } from './recommendation.repository.js';

/** Answers recommendation requests once per question and announces what was recommended through the outbox. */
@Module({
  imports: [RankingModule],
  controllers: [RecommendController],
  providers: [GeneratedEventsOutbox, RecommendationRepository, GeneratedEventsRelay, RecommendService],
})
export class RecommendModule {}
