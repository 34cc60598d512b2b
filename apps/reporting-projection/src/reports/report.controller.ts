import { MessagePattern, Payload } from '@nestjs/microservices';
import { BreakdownRequestDto, ReportRequestDto, RpcSubjects, SeriesRequestDto, type PreparingReport } from '#libs/contracts';
import { RpcController, type RawJson } from '#libs/nats';
import { BreakdownService } from './breakdown.service.js';
import { ReportService } from './report.service.js';

/** `reporting.v1.report.get`, `reporting.v1.series.get` and `reporting.v1.breakdown.get`, answered in the reporting queue group. */
@RpcController()
export class ReportController {
  constructor(
    private readonly reports: ReportService,
    private readonly breakdowns: BreakdownService,
  ) {}

  /** A ready report as its serialized JSON (RawJson), a new one as the PreparingReport of DESIGN §5. */
  @MessagePattern(RpcSubjects.reportGet)
  report(@Payload() request: ReportRequestDto): Promise<RawJson | PreparingReport> {
    return this.reports.report(request);
  }

  /** A ready series as its serialized JSON (RawJson), a new one as the PreparingReport of DESIGN §5. */
  @MessagePattern(RpcSubjects.seriesGet)
  seriesOf(@Payload() request: SeriesRequestDto): Promise<RawJson | PreparingReport> {
    return this.reports.seriesOf(request);
  }

  /** A ready breakdown as its serialized JSON (RawJson), a new one as the PreparingReport of DESIGN §5. */
  @MessagePattern(RpcSubjects.breakdownGet)
  breakdownOf(@Payload() request: BreakdownRequestDto): Promise<RawJson | PreparingReport> {
    return this.breakdowns.breakdown(request);
  }
}
