import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { LOGGER } from '#libs/bootstrap';
import { TIME_RANGES, type PreparingReport, type Report } from '#libs/contracts';
import { IdentityCacheService } from '../../apps/gateway/src/auth/identity-cache.service.js';
import { KeyUsageService } from '../../apps/gateway/src/auth/key-usage.service.js';
import { RateLimitService } from '../../apps/gateway/src/rate-limit/rate-limit.service.js';
import { API_KEY_SECURITY, buildOpenApiDocument } from '../../apps/gateway/src/docs/api-docs.js';
import { DOWNSTREAM } from '../../apps/gateway/src/http/downstream-services.js';
import { ReportingController } from '../../apps/gateway/src/reporting/reporting.controller.js';
import { ReportingService } from '../../apps/gateway/src/reporting/reporting.service.js';
import { SeriesReplyCache } from '../../apps/gateway/src/reporting/series-reply-cache.js';
import { PREPARING_EXAMPLE, REPORT_EXAMPLE } from '../../apps/gateway/src/reporting/reporting.dto.js';

/**
 * The OpenAPI document is generated from the controller's and DTOs' decorators. It is built
 * here from the reporting controller alone (no servers): the controller's collaborators are
 * stubs, which the document never calls.
 */

// Every field of the contract's Report: the compiler refuses this literal when Report gains a
// field (so this list follows the contract), and the test fails when the schema lacks one.
const FULL_REPORT: Required<Report> = {
  agent_id: 'agent_1', time_range: 'all', start_at: null, end_at: '2026-11-25T10:00:00.000Z', currency: 'USD', is_test: true,
  report_schema_version: 1, earnings_basis: 'recorded_accounting_entries', status: 'stale', earnings_coverage: 'unavailable',
  processed_through: '2026-11-25T10:00:00.000Z', updated_at: '2026-11-25T10:00:01.000Z', accounting_reconciled_through: null,
  timezone: 'Asia/Kathmandu', exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0,
  earnings_excluded_recommendations: 0, pending_earnings_recommendations: 0, accounting_review_required: 0,
  earnings_adapter_version: 'accounting-v1',
};
const FULL_PREPARING: Required<PreparingReport> = {
  status: 'preparing', agent_id: 'agent_1', time_range: '30d', is_test: false, report_schema_version: 1,
};

interface Schema {
  type?: string;
  format?: string;
  nullable?: boolean;
  enum?: string[];
  example?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
}

@Module({
  controllers: [ReportingController],
  providers: [
    { provide: DOWNSTREAM.reporting.client, useValue: {} },
    ReportingService,
    { provide: SeriesReplyCache, useValue: {} },
    { provide: LOGGER, useValue: {} },
    { provide: IdentityCacheService, useValue: {} },
    { provide: RateLimitService, useValue: {} },
    { provide: KeyUsageService, useValue: {} },
  ],
})
class DocsOnlyModule {}

let app: NestFastifyApplication;
let document: OpenAPIObject;

beforeAll(async () => {
  app = await NestFactory.create<NestFastifyApplication>(DocsOnlyModule, new FastifyAdapter(), { logger: false, abortOnError: false });
  document = buildOpenApiDocument(app);
});

afterAll(async () => {
  await app?.close();
});

function schema(name: string): Schema {
  const found = document.components?.schemas?.[name] as Schema | undefined;
  if (!found) throw new Error(`schema ${name} missing from the document`);
  return found;
}

describe('Report schema', () => {
  it('has exactly the fields of the contract, all required', () => {
    const report = schema('Report');
    const keys = Object.keys(FULL_REPORT).sort();
    expect(Object.keys(report.properties ?? {}).sort()).toEqual(keys);
    expect([...(report.required ?? [])].sort()).toEqual(keys);
    // The example of the document is a full report too.
    expect(Object.keys(REPORT_EXAMPLE).sort()).toEqual(keys);
  });

  it('marks exactly the SPEC nullable timestamps as nullable', () => {
    const properties = schema('Report').properties!;
    const nullable = Object.entries(properties).filter(([, p]) => p.nullable).map(([name]) => name).sort();
    expect(nullable).toEqual(['accounting_reconciled_through', 'start_at']);
  });

  it('types every field as SPEC says, with an example', () => {
    const properties = schema('Report').properties!;
    for (const [name, value] of Object.entries(FULL_REPORT)) {
      const property = properties[name];
      expect(property.example).toBeDefined();
      if (typeof value === 'number') expect([name, property.type]).toEqual([name, 'integer']);
      if (typeof value === 'boolean') expect([name, property.type]).toEqual([name, 'boolean']);
      if (typeof value === 'string' || value === null) expect([name, property.type]).toEqual([name, 'string']);
    }
    for (const name of ['start_at', 'end_at', 'processed_through', 'updated_at', 'accounting_reconciled_through']) {
      expect([name, properties[name].format]).toEqual([name, 'date-time']);
    }
  });

  it('enumerates time_range, status and earnings_coverage', () => {
    const properties = schema('Report').properties!;
    expect(properties.time_range.enum).toEqual([...TIME_RANGES]);
    expect(properties.status.enum).toEqual(['ready', 'stale']);
    expect(properties.earnings_coverage.enum).toEqual(['complete', 'partial', 'unavailable']);
  });
});

describe('PreparingReport and Problem schemas', () => {
  it('describes the 202 body with exactly the contract fields and no totals', () => {
    const preparing = schema('PreparingReport');
    const keys = Object.keys(FULL_PREPARING).sort();
    expect(Object.keys(preparing.properties ?? {}).sort()).toEqual(keys);
    expect([...(preparing.required ?? [])].sort()).toEqual(keys);
    expect(preparing.properties!.status.enum).toEqual(['preparing']);
    expect(Object.keys(PREPARING_EXAMPLE).sort()).toEqual(keys);
  });

  it('describes the RFC 9457 problem body', () => {
    expect(Object.keys(schema('Problem').properties ?? {}).sort()).toEqual(['detail', 'status', 'title', 'type']);
  });
});

describe('GET /agent/reporting operation', () => {
  const operation = () => document.paths['/agent/reporting']?.get;

  it('documents every status with an example', () => {
    const responses = operation()!.responses as Record<string, { content?: Record<string, { schema?: Schema; example?: unknown; examples?: Record<string, unknown> }> }>;
    expect(Object.keys(responses).sort()).toEqual(['200', '202', '401', '403', '422', '429', '503']);
    expect(responses['200'].content!['application/json'].schema!.$ref).toBe('#/components/schemas/Report');
    expect(responses['200'].content!['application/json'].example).toEqual(REPORT_EXAMPLE);
    expect(responses['202'].content!['application/json'].schema!.$ref).toBe('#/components/schemas/PreparingReport');
    expect(responses['202'].content!['application/json'].example).toEqual(PREPARING_EXAMPLE);
    for (const status of ['401', '403', '422', '429', '503']) {
      const content = responses[status].content!;
      expect(Object.keys(content)).toEqual(['application/problem+json']);
      expect(content['application/problem+json'].schema!.$ref).toBe('#/components/schemas/Problem');
      const examples = Object.values(content['application/problem+json'].examples ?? {}) as { value: { status: number; type: string } }[];
      expect(examples.length).toBeGreaterThan(0);
      for (const { value } of examples) {
        expect(value.status).toBe(Number(status));
        expect(value.type).toMatch(/^https:\/\/docs\.weave\.example\/problems\/[a-z-]+$/);
      }
    }
  });

  it('takes only time_range, as an optional enum defaulting to 30d', () => {
    const parameters = operation()!.parameters as { name: string; in: string; required?: boolean; schema?: Schema & { default?: string } }[];
    expect(parameters.map((p) => [p.name, p.in, p.required ?? false])).toEqual([['time_range', 'query', false]]);
    expect(parameters[0].schema!.enum).toEqual([...TIME_RANGES]);
    expect(parameters[0].schema!.default).toBe('30d');
  });

  it('documents the rate limit (429 with Retry-After) on every authenticated operation, and only there', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'put', 'delete'] as const).flatMap((method) => (item[method] ? [{ path, method, operation: item[method]! }] : [])),
    );
    expect(operations.filter(({ operation }) => operation.security?.length).length).toBeGreaterThanOrEqual(1);
    for (const { path, method, operation } of operations) {
      const tooMany = operation.responses['429'] as { headers?: Record<string, unknown> } | undefined;
      expect([path, method, Boolean(tooMany)]).toEqual([path, method, Boolean(operation.security?.length)]);
      if (tooMany) expect(Object.keys(tooMany.headers ?? {})).toContain('Retry-After');
    }
  });

  it('is secured by the bearer API-key scheme', () => {
    expect(operation()!.security).toEqual([{ [API_KEY_SECURITY]: [] }]);
    expect(document.components?.securitySchemes?.[API_KEY_SECURITY]).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
