import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { LOGGER } from '#libs/bootstrap';
import { QueueGroups, RecommendRequestDto, RpcSubjects, type RecommendResult } from '#libs/contracts';
import { NatsClient, serveRpc } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { RecommendService } from './recommend.service.js';

/** Answers `recommendations.v1.recommend` in the queue group shared by the replicas. */
@Injectable()
export class RecommendRpc implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscription?: Subscription;

  constructor(
    private readonly nats: NatsClient,
    private readonly service: RecommendService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = serveRpc<RecommendRequestDto, RecommendResult>(
      this.nats,
      RpcSubjects.recommend,
      { queue: QueueGroups.recommendations, requestClass: RecommendRequestDto, logger: this.logger },
      (request) => this.service.recommend(request),
    );
  }

  beforeApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }
}
