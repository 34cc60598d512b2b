import { Injectable } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The gateway's OpenAPI document as served. It is built from the controllers of every module
 * (buildOpenApiDocument), so only once the application exists: createGatewayApp publishes it.
 */
@Injectable()
export class OpenApiDocument {
  private serialized?: string;

  publish(document: OpenAPIObject): void {
    this.serialized = JSON.stringify(document);
  }

  get json(): string {
    if (this.serialized === undefined) throw new Error('the OpenAPI document has not been published');
    return this.serialized;
  }
}
