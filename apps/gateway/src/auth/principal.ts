import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Traffic } from '#libs/contracts';

/** Who is calling: derived from the API key, never from anything the caller states. */
export interface PlatformPrincipal {
  agent_id: string;
  /** `live` for a production key, `test` for a test key (SPEC Authentication rule 4). */
  traffic: Traffic;
  key_id: string;
}

export const PRINCIPAL = Symbol('platformPrincipal');

export type RequestWithPrincipal = { [PRINCIPAL]?: PlatformPrincipal };

/** The principal the ApiKeyGuard attached to the request. */
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): PlatformPrincipal => {
  const principal = context.switchToHttp().getRequest<RequestWithPrincipal>()[PRINCIPAL];
  if (!principal) throw new Error('Principal used on a route without ApiKeyGuard');
  return principal;
});
