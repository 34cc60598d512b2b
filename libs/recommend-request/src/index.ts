// The request of a recommendation: the body of POST /agent/recommend and the request of
// recommendations.v1.recommend, with their validation and OpenAPI description. Apart from
// #libs/contracts because its DTOs carry @nestjs/swagger's decorators: the services that
// neither answer nor document a recommend request (reporting-projection, payouts-read,
// timezone-settings) then never load @nestjs/swagger (about 4 MB of heap,
// docs/benchmarks/reporting-store.md).
export * from './recommendations.validation.js';
export * from './recommendations.fast-check.js';
