import { Module } from '@nestjs/common';
import { ApiDocsController } from './api-docs.controller.js';
import { OpenApiDocument } from './openapi-document.js';

/** The API documentation: GET /docs (Swagger UI, served offline) and GET /docs/openapi.json. */
@Module({
  controllers: [ApiDocsController],
  providers: [OpenApiDocument],
  exports: [OpenApiDocument],
})
export class DocsModule {}
