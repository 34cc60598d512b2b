import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { LOGGER } from '#libs/bootstrap';
import {
  QueueGroups,
  RpcSubjects,
  TimezoneGetRequestDto,
  TimezoneSetRequestDto,
  type TimezoneSetResult,
  type TimezoneSetting,
} from '#libs/contracts';
import { NatsClient, serveRpc } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { TimezoneEventsRelay } from './timezone-events.relay.js';
import { TimezoneSettingsService } from './timezone-settings.service.js';

/** Answers `timezone.v1.get` and `timezone.v1.set` in the queue group shared by the replicas. */
@Injectable()
export class TimezoneSettingsRpc implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly nats: NatsClient,
    private readonly settings: TimezoneSettingsService,
    private readonly relay: TimezoneEventsRelay,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const options = { queue: QueueGroups.timezoneSettings, logger: this.logger };
    this.subscriptions = [
      serveRpc<TimezoneGetRequestDto, TimezoneSetting>(
        this.nats,
        RpcSubjects.timezoneGet,
        { ...options, requestClass: TimezoneGetRequestDto },
        (request) => this.settings.get(request.agent_id),
      ),
      serveRpc<TimezoneSetRequestDto, TimezoneSetResult>(
        this.nats,
        RpcSubjects.timezoneSet,
        { ...options, requestClass: TimezoneSetRequestDto },
        async (request, context) => {
          const { result, event } = await this.settings.set(request.agent_id, request.reporting_timezone);
          if (event) {
            // The change is committed: answer at once, whether or not JetStream is reachable
            // right now (the relay publishes in the background and retries from the outbox).
            this.relay.publishSoon([event]);
            this.logger.info(
              { agent_id: result.agent_id, reporting_timezone: result.reporting_timezone, event_id: event.event_id, requestId: context.requestId },
              'reporting timezone changed',
            );
          }
          return result;
        },
      ),
    ];
  }

  beforeApplicationShutdown(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }
}
