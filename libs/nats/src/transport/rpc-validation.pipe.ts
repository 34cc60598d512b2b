import { Injectable, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { fastCheckOf, type RpcError } from '#libs/contracts';

function messages(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => [...Object.values(error.constraints ?? {}), ...messages(error.children ?? [])]);
}

/**
 * Validates every `@Payload()` against its DTO class from libs/contracts (whitelist, unknown
 * fields refused) and answers `invalid_request` with the reasons. A DTO marked with
 * `@FastCheck(check)` skips class-validator when the check accepts the payload (the hot path:
 * report requests); the check accepts only what the DTO accepts, so outcomes are the same.
 */
@Injectable()
export class RpcValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      exceptionFactory: (errors) =>
        new RpcException({ code: 'invalid_request', message: messages(errors).join('; ') || 'request is not valid' } satisfies RpcError),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (fastCheckOf(metadata.metatype)?.(value)) return value;
    if (metadata.type === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw new RpcException({ code: 'invalid_request', message: 'request must be an object' } satisfies RpcError);
    }
    return super.transform(value, metadata);
  }
}
