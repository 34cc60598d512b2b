import { Module } from '@nestjs/common';
import { RecommendModule } from './recommend/recommend.module.js';

/** recommendations: ranks the catalog for a question and records the answer. createRecommendationsApp adds the InfrastructureModule. */
@Module({ imports: [RecommendModule] })
export class RecommendationsModule {}
