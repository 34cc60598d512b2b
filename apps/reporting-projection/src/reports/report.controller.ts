import { MessagePattern, Payload } from '@nestjs/microservices';
import { ReportRequestDto, RpcSubjects, SeriesRequestDto, type PreparingReport } from '#libs/contracts';
import { RpcController, type RawJson } from '#libs/nats';
import { ReportService } from './report.service.js';
import { SeriesService } from './series.service.js';

/** `reporting.v1.report.get` and `reporting.v1.series.get`, answered in the reporting queue group. */
@RpcController()
export class ReportController {
  constructor(
    private readonly reports: ReportService,
    private readonly series: SeriesService,
  ) {}

  /** A ready report as its serialized JSON (RawJson), a new one as the PreparingReport of DESIGN §5. */
  @MessagePattern(RpcSubjects.reportGet)
  report(@Payload() request: ReportRequestDto): Promise<RawJson | PreparingReport> {
    return this.reports.report(request);
  }

  /** A ready series as its serialized JSON (RawJson), a new one as the PreparingReport of DESIGN §5. */
  @MessagePattern(RpcSubjects.seriesGet)
  seriesOf(@Payload() request: SeriesRequestDto): Promise<RawJson | PreparingReport> {
    return this.series.series(request);
  }
}
