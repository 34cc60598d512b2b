import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ReportRequestDto, RpcSubjects, type ReportReply } from '#libs/contracts';
import { ReportService } from './report.service.js';

/** `reporting.v1.report.get`, answered in the reporting queue group. */
@Controller()
export class ReportController {
  constructor(private readonly reports: ReportService) {}

  @MessagePattern(RpcSubjects.reportGet)
  report(@Payload() request: ReportRequestDto): Promise<ReportReply> {
    return this.reports.report(request);
  }
}
