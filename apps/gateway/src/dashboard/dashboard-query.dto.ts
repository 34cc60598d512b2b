import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { TRAFFICS, shownValue, type Traffic } from '#libs/contracts';
import { BreakdownQueryDto } from '../reporting/breakdown-query.dto.js';
import { ReportQueryDto } from '../reporting/report-query.dto.js';
import { SeriesQueryDto } from '../reporting/series-query.dto.js';

/** The traffic the owner looks at (an API key's mode decides it on the key routes). */
function TrafficParameter(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      enum: TRAFFICS,
      default: 'live',
      description: 'live (default) or test traffic: what /agent/reporting answers for a live or a test key.',
      example: 'live',
    }),
    IsIn(TRAFFICS, { message: ({ value }) => `Unsupported traffic ${shownValue(value)}: live or test.` }),
  );
}

/** The query of GET /agent/dashboard/reporting: time_range and traffic (DESIGN §7). */
export class OwnerReportQueryDto extends ReportQueryDto {
  @TrafficParameter()
  traffic: Traffic = 'live';
}

/** The query of GET /agent/dashboard/reporting/series: time_range, granularity, format and traffic. */
export class OwnerSeriesQueryDto extends SeriesQueryDto {
  @TrafficParameter()
  traffic: Traffic = 'live';
}

/** The query of GET /agent/dashboard/reporting/breakdown: time_range, by, limit, sort, format and traffic. */
export class OwnerBreakdownQueryDto extends BreakdownQueryDto {
  @TrafficParameter()
  traffic: Traffic = 'live';
}
