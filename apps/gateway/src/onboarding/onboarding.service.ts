import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, type TimezoneSetRequestDto, type TimezoneSetResult } from '#libs/contracts';
import { withRequestId } from '#libs/nats';
import { DOWNSTREAM } from '../http/downstream-services.js';
import type { OnboardingSettingsDto } from './onboarding.dto.js';

/** The platform's onboarding settings, kept by timezone-settings (asked over NATS request/reply; failures: RpcCallFilter). */
@Injectable()
export class OnboardingService {
  constructor(@Inject(DOWNSTREAM.timezoneSettings.client) private readonly timezoneSettings: ClientProxy) {}

  /** Sets the reporting timezone of the platform; the settings then in force. */
  async setReportingTimezone(agentId: string, reportingTimezone: string, requestId: string): Promise<OnboardingSettingsDto> {
    const payload: TimezoneSetRequestDto = { agent_id: agentId, reporting_timezone: reportingTimezone };
    const { agent_id, reporting_timezone, updated_at } = await firstValueFrom(this.timezoneSettings.send<TimezoneSetResult>(RpcSubjects.timezoneSet, withRequestId(payload, requestId)));
    return { agent_id, reporting_timezone, updated_at };
  }
}
