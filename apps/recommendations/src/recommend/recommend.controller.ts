import { RpcController } from '#libs/nats';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RpcSubjects, type RecommendResult } from '#libs/contracts';
import { RecommendRequestDto } from '#libs/recommend-request';
import { RecommendService } from './recommend.service.js';

/** `recommendations.v1.recommend`, answered in the queue group shared by the replicas. */
@RpcController()
export class RecommendController {
  constructor(private readonly service: RecommendService) {}

  @MessagePattern(RpcSubjects.recommend)
  recommend(@Payload() request: RecommendRequestDto): Promise<RecommendResult> {
    return this.service.recommend(request);
  }
}
