import { Inject } from '@nestjs/common';
import { RpcController } from '#libs/nats';
import { Ctx, MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import { LOGGER } from '#libs/bootstrap';
import {
  REQUEST_ID_HEADER,
  RpcSubjects,
  TimezoneGetRequestDto,
  TimezoneSetRequestDto,
  type TimezoneSetResult,
  type TimezoneSetting,
} from '#libs/contracts';
import type { Logger } from '#libs/observability';
import { TimezoneEventsRelay } from './timezone-events.relay.js';
import { TimezoneSettingsService } from './timezone-settings.service.js';

/** `timezone.v1.get` and `timezone.v1.set`, answered in the queue group shared by the replicas. */
@RpcController()
export class TimezoneSettingsController {
  constructor(
    private readonly settings: TimezoneSettingsService,
    private readonly relay: TimezoneEventsRelay,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(RpcSubjects.timezoneGet)
  get(@Payload() request: TimezoneGetRequestDto): Promise<TimezoneSetting> {
    return this.settings.get(request.agent_id);
  }

  @MessagePattern(RpcSubjects.timezoneSet)
  async set(@Payload() request: TimezoneSetRequestDto, @Ctx() context: NatsContext): Promise<TimezoneSetResult> {
    const { result, event } = await this.settings.set(request.agent_id, request.reporting_timezone);
    if (event) {
      // The change is committed: answer at once, whether or not JetStream is reachable right
      // now (the relay publishes in the background and retries from the outbox).
      this.relay.publishSoon([event]);
      this.logger.info(
        {
          agent_id: result.agent_id,
          reporting_timezone: result.reporting_timezone,
          event_id: event.event_id,
          requestId: context.getHeaders()?.get(REQUEST_ID_HEADER) || undefined,
        },
        'reporting timezone changed',
      );
    }
    return result;
  }
}
