import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser } from '@asyncapi/parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import YAML from 'yaml';
import * as contracts from '#libs/contracts';
import * as recommendRequest from '#libs/recommend-request';
import {
  BroadcastSubjects,
  DeadLetterHeaders,
  DeadLetterSubjects,
  EventSubjects,
  RECOMMENDATION_EVENT_KINDS,
  REQUEST_ID_HEADER,
  RPC_ERROR_CODES,
  RpcSubjects,
  SettingsSubjects,
  deadLetterSubject,
  type PayoutBalance,
  type PayoutBalancesReply,
  type PayoutOverviewReply,
  type PayoutPage,
  type PayoutReadiness,
  type PayoutStatement,
  type PreparingReport,
  type RecommendResult,
  type Report,
  type ReportSeries,
  type SeriesBucket,
  type TimezoneSetResult,
  type TimezoneSetting,
} from '#libs/contracts';

/**
 * docs/asyncapi.yaml is parsed with @asyncapi/parser (no error diagnostics) and held to
 * libs/contracts: every subject in the code is a channel and every channel a subject in the
 * code; each channel carries the DTO of its subject; each DTO's schema (schema name = class
 * name) has exactly the DTO's properties, `required` = the properties class-validator requires
 * (not skipped when absent: no IsOptional, no ValidateIf that skips undefined), and `null`
 * where the DTO accepts null. Reply payloads (TypeScript interfaces) are held to typed samples
 * that the compiler keeps complete.
 */

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
  oneOf?: Schema[];
  enum?: unknown[];
};
interface Doc {
  channels: Record<string, { address: string | null; parameters?: Record<string, { enum?: string[] }>; messages: Record<string, { $ref: string }> }>;
  operations: Record<string, { action: string; channel: { $ref: string }; reply?: { channel: { $ref: string } } }>;
  components: { messages: Record<string, { payload: Schema; headers?: Schema; examples?: { payload: unknown }[] }>; schemas: Record<string, Schema> };
}

const text = readFileSync(join(process.cwd(), 'docs/asyncapi.yaml'), 'utf8');
const doc = YAML.parse(text) as Doc;
const schemas = doc.components.schemas;
const deref = <T>(ref: string): T => ref.replace(/^#\//, '').split('/').reduce((node: never, key) => node[key], doc as never) as T;

/** The subject of every channel of the code, with the DTO class (by name) of its payload. */
const CODE_SUBJECTS: Record<string, string | null> = {
  [`${EventSubjects.recommendationPrefix}{kind}`]: 'RecommendationEventDto',
  [EventSubjects.accountingEntry]: 'AccountingEntryDto',
  [EventSubjects.accountingReconciled]: 'ReconciliationWatermarkDto',
  [EventSubjects.payoutsBalance]: 'PayoutBalanceEventDto',
  [EventSubjects.payoutsReadiness]: 'PayoutReadinessEventDto',
  [EventSubjects.payoutsStatement]: 'PayoutStatementEventDto',
  [deadLetterSubject('{originalSubject}')]: null,
  [SettingsSubjects.timezoneChanged]: 'TimezoneChangedEventDto',
  [BroadcastSubjects.identityChanged]: 'IdentityChangedMessage',
  [BroadcastSubjects.reportsPublished]: 'ReportsPublishedMessage',
  [BroadcastSubjects.payoutsChanged]: 'PayoutsChangedMessage',
  [RpcSubjects.reportGet]: 'ReportRequestDto',
  [RpcSubjects.seriesGet]: 'SeriesRequestDto',
  [RpcSubjects.breakdownGet]: 'BreakdownRequestDto',
  [RpcSubjects.timezoneGet]: 'TimezoneGetRequestDto',
  [RpcSubjects.timezoneSet]: 'TimezoneSetRequestDto',
  [RpcSubjects.payoutsBalanceGet]: 'PayoutsAgentRequestDto',
  [RpcSubjects.payoutsReadinessGet]: 'PayoutsAgentRequestDto',
  [RpcSubjects.payoutsOverviewGet]: 'PayoutsAgentRequestDto',
  [RpcSubjects.payoutsStatementsList]: 'PayoutStatementsListRequestDto',
  [RpcSubjects.payoutsStatementGet]: 'PayoutStatementGetRequestDto',
  [RpcSubjects.payoutsHistoryList]: 'PayoutHistoryListRequestDto',
  [RpcSubjects.recommend]: 'RecommendRequestDto',
};

/** Every concrete subject the code names (wildcards and prefixes expanded). */
function subjectsInCode(): string[] {
  const events = Object.entries(EventSubjects)
    .filter(([key]) => key !== 'all' && key !== 'recommendationPrefix')
    .map(([, subject]) => subject);
  const settings = Object.entries(SettingsSubjects).filter(([key]) => key !== 'all').map(([, s]) => s);
  return [
    ...RECOMMENDATION_EVENT_KINDS.map((kind) => `${EventSubjects.recommendationPrefix}${kind}`),
    ...events,
    deadLetterSubject('{originalSubject}'),
    ...settings,
    ...Object.values(RpcSubjects),
    ...Object.values(BroadcastSubjects),
  ];
}

/** Channel addresses with enumerated parameters expanded. */
function subjectsInDocument(): string[] {
  return Object.values(doc.channels).flatMap((channel) => {
    if (channel.address === null) return [];
    let subjects = [channel.address];
    for (const [name, parameter] of Object.entries(channel.parameters ?? {})) {
      if (!parameter.enum) continue;
      subjects = subjects.flatMap((s) => parameter.enum!.map((value) => s.replace(`{${name}}`, value)));
    }
    return subjects;
  });
}

/**
 * DTO classes exported by libs/contracts and libs/recommend-request (the recommend request, apart
 * because it carries OpenAPI decorators): every class with class-validator metadata.
 */
function dtoClasses(): Map<string, new () => object> {
  const classes = new Map<string, new () => object>();
  for (const [name, value] of Object.entries({ ...contracts, ...recommendRequest })) {
    if (typeof value !== 'function' || !/^class\s/.test(Function.prototype.toString.call(value))) continue;
    const metadata = getMetadataStorage().getTargetValidationMetadatas(value as new () => object, '', true, false);
    if (metadata.length > 0) classes.set(name, value as new () => object);
  }
  return classes;
}

interface PropertyRule {
  optional: boolean;
  acceptsNull: boolean;
}

/** Per property of a DTO: whether class-validator skips it when absent, and when null. */
function dtoRules(dto: new () => object): Map<string, PropertyRule> {
  const rules = new Map<string, PropertyRule>();
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  for (const property of new Set(metadata.map((m) => m.propertyName))) {
    const conditions = metadata
      .filter((m) => m.propertyName === property && m.type === 'conditionalValidation')
      .map((m) => m.constraints[0] as (object: object, value: unknown) => boolean);
    const skipped = (value: unknown) => conditions.some((condition) => !condition({ [property]: value }, value));
    rules.set(property, { optional: skipped(undefined), acceptsNull: skipped(null) });
  }
  return rules;
}

function resolve(schema: Schema): Schema {
  return schema.$ref ? resolve(deref<Schema>(schema.$ref)) : schema;
}

function allowsNull(schema: Schema): boolean {
  const s = resolve(schema);
  const types = Array.isArray(s.type) ? s.type : [s.type];
  return types.includes('null') || (s.oneOf ?? []).some((option) => allowsNull(option));
}

describe('docs/asyncapi.yaml', () => {
  it('is a valid AsyncAPI 3 document (@asyncapi/parser reports no errors)', async () => {
    const { document, diagnostics } = await new Parser().parse(text);
    const errors = diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join('.')}: ${d.message}`);
    expect(errors).toEqual([]);
    expect(document).toBeDefined();
    expect(document!.version()).toMatch(/^3\./);
    expect(document!.channels().length).toBe(Object.keys(doc.channels).length);
  });

  it('has a channel for every NATS subject of libs/contracts, and no other', () => {
    expect(new Set(subjectsInDocument())).toEqual(new Set(subjectsInCode()));
    expect(Object.keys(CODE_SUBJECTS).sort()).toEqual(
      [...new Set(subjectsInCode().map((s) => (s.startsWith(EventSubjects.recommendationPrefix) ? `${EventSubjects.recommendationPrefix}{kind}` : s)))].sort(),
    );
  });

  it('carries the DTO of each subject as its message payload', () => {
    for (const channel of Object.values(doc.channels)) {
      if (channel.address === null) continue;
      const expected = CODE_SUBJECTS[channel.address];
      const messages = Object.values(channel.messages).map((m) => deref<{ payload: Schema }>(m.$ref));
      expect(messages).toHaveLength(1);
      const payloadRef = messages[0].payload.$ref;
      expect({ subject: channel.address, payload: payloadRef ?? null }).toEqual({
        subject: channel.address,
        payload: expected ? `#/components/schemas/${expected}` : null,
      });
    }
  });

  it('keeps event subjects inside their streams and request/reply subjects outside every stream', () => {
    const streamPrefixes = [EventSubjects.all, DeadLetterSubjects.all, SettingsSubjects.all].map((s) => s.replace(/>$/, ''));
    const inStream = (subject: string) => streamPrefixes.some((prefix) => subject.startsWith(prefix));
    for (const subject of subjectsInCode()) {
      const isRpcOrBroadcast = (Object.values(RpcSubjects) as string[]).includes(subject) || (Object.values(BroadcastSubjects) as string[]).includes(subject);
      expect({ subject, inStream: inStream(subject) }).toEqual({ subject, inStream: !isRpcOrBroadcast });
    }
  });

  it('describes every request/reply subject as a receive operation with a reply of the RpcReply envelope', () => {
    for (const subject of Object.values(RpcSubjects)) {
      const [key] = Object.entries(doc.channels).find(([, c]) => c.address === subject)!;
      const operation = Object.values(doc.operations).find((o) => o.channel.$ref === `#/channels/${key}`);
      expect(operation?.action).toBe('receive');
      const replyChannel = deref<Doc['channels'][string]>(operation!.reply!.channel.$ref);
      expect(replyChannel.address).toBeNull();
      const reply = deref<{ payload: Schema }>(Object.values(replyChannel.messages)[0].$ref).payload;
      const [success, failure] = reply.oneOf!;
      expect(success.required).toEqual(['ok', 'result']);
      expect(failure.$ref).toBe('#/components/schemas/RpcErrorReply');
      const request = deref<{ headers: Schema }>(Object.values(doc.channels[key].messages)[0].$ref);
      expect(Object.keys(resolve(request.headers).properties!)).toEqual([REQUEST_ID_HEADER]);
    }
    const error = schemas.RpcErrorReply.properties!.error;
    expect(error.properties!.code.enum).toEqual([...RPC_ERROR_CODES]);
  });

  it('names the dead-letter headers of libs/contracts', () => {
    const headers = Object.keys(schemas.DeadLetterHeaders.properties!).filter((h) => h !== 'Nats-Msg-Id');
    expect(headers.sort()).toEqual(Object.values(DeadLetterHeaders).sort());
    expect(schemas.DeadLetterHeaders.required!.sort()).toEqual([...Object.values(DeadLetterHeaders), 'Nats-Msg-Id'].sort());
  });

  const classes = dtoClasses();

  it('has a schema for every DTO class of libs/contracts', () => {
    expect(classes.size).toBeGreaterThanOrEqual(17);
    for (const name of classes.keys()) expect({ name, documented: name in schemas }).toEqual({ name, documented: true });
    for (const name of Object.keys(schemas).filter((n) => n.endsWith('Dto'))) expect({ name, inCode: classes.has(name) }).toEqual({ name, inCode: true });
  });

  it.each([...dtoClasses().keys()])('%s: properties, required and nullability equal the DTO', (name) => {
    const schema = schemas[name];
    const rules = dtoRules(classes.get(name)!);
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual([...rules.keys()].sort());
    const required = [...rules].filter(([, rule]) => !rule.optional).map(([property]) => property);
    expect([...(schema.required ?? [])].sort()).toEqual(required.sort());
    for (const [property, rule] of rules) {
      const documentedNull = allowsNull(schema.properties![property]);
      // A required property that accepts null must say so; no property may promise null the DTO refuses.
      if (!rule.optional) expect({ property, nullable: documentedNull }).toEqual({ property, nullable: rule.acceptsNull });
      else if (documentedNull) expect({ property, acceptsNull: rule.acceptsNull }).toEqual({ property, acceptsNull: true });
    }
  });

  it('its examples are valid for both the schema and the DTO', () => {
    const ajv = new Ajv.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ components: { schemas } }, 'doc');
    let checked = 0;
    for (const message of Object.values(doc.components.messages)) {
      for (const example of message.examples ?? []) {
        const ref = message.payload.$ref!;
        const valid = ajv.validate({ $ref: `doc${ref}` }, example.payload);
        expect(ajv.errors ?? []).toEqual([]);
        expect(valid).toBe(true);
        const dto = classes.get(ref.split('/').at(-1)!)!;
        expect(validateSync(plainToInstance(dto, example.payload) as object)).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });

  // Reply payloads are TypeScript interfaces: these samples must name every field (the compiler
  // refuses a sample that misses one or has an unknown one), and the schemas must match them.
  const statement: Required<PayoutStatement> = {
    statement_id: 's', agent_id: 'a', period_start: 't', period_end: 't', currency: 'USD', status: 'PAID', gross_earnings_micros: 0,
    service_fee_micros: 0, net_earnings_micros: 0, blocked_reason: null, failure: null, transfer: null, created_at: 't', updated_at: 't',
  };
  const balance: Required<PayoutBalance> = { agent_id: 'a', currency: 'USD', pending_micros: 0, available_micros: 0, locked_micros: 0, paid_out_micros: 0, updated_at: 't' };
  const readiness: Required<PayoutReadiness> = { agent_id: 'a', setup_status: 'complete', missing_fields: [], thresholds: [], blocked_reason: null, updated_at: null };
  const samples: Record<string, object> = {
    Report: {
      agent_id: 'a', time_range: 'all', start_at: null, end_at: 't', currency: 'USD', is_test: true, report_schema_version: 1,
      earnings_basis: 'recorded_accounting_entries', status: 'stale', earnings_coverage: 'unavailable', processed_through: 't', updated_at: 't',
      accounting_reconciled_through: null, timezone: 'UTC', exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0,
      earnings_excluded_recommendations: 0, pending_earnings_recommendations: 0, accounting_review_required: 0, earnings_adapter_version: 'accounting-v1',
    } satisfies Required<Report>,
    PreparingReport: { status: 'preparing', agent_id: 'a', time_range: '30d', is_test: false, report_schema_version: 1 } satisfies Required<PreparingReport>,
    ReportSeries: {
      agent_id: 'a', time_range: '7d', granularity: 'day', timezone: 'UTC', is_test: false, start_at: 't', end_at: 't', processed_through: 't',
      status: 'ready', currency: 'USD', buckets: [],
    } satisfies Required<ReportSeries>,
    SeriesBucket: { start_at: 't', end_at: 't', exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 } satisfies Required<SeriesBucket>,
    TimezoneSetting: { agent_id: 'a', reporting_timezone: 'UTC', updated_at: null } satisfies Required<TimezoneSetting>,
    TimezoneSetResult: { agent_id: 'a', reporting_timezone: 'UTC', updated_at: 't', changed: true } satisfies Required<TimezoneSetResult>,
    PayoutBalance: balance,
    PayoutBalancesReply: { balances: [balance] } satisfies Required<PayoutBalancesReply>,
    PayoutReadiness: readiness,
    PayoutStatement: statement,
    PayoutStatementPage: { items: [statement], page: 1, page_size: 20, total: 1 } satisfies Required<PayoutPage<PayoutStatement>>,
    PayoutOverviewReply: { balances: [], readiness, latest_statement: null, recent_statements: [] } satisfies Required<PayoutOverviewReply>,
    RecommendResult: { request_id: 'r', query: 'q', recommendations: [] } satisfies Required<RecommendResult>,
  };

  it.each(Object.keys(samples))('reply schema %s has exactly the fields of its interface, all required', (name) => {
    const keys = Object.keys(samples[name]).sort();
    expect(Object.keys(schemas[name].properties!).sort()).toEqual(keys);
    expect([...schemas[name].required!].sort()).toEqual(keys);
  });
});
