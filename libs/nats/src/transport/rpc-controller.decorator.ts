import { Controller, UseFilters, UsePipes, applyDecorators } from '@nestjs/common';
import { RpcErrorFilter } from './rpc-error.filter.js';
import { RpcValidationPipe } from './rpc-validation.pipe.js';

/**
 * A controller of `@MessagePattern` handlers: every payload validated against its DTO
 * (RpcValidationPipe), every failure answered as a typed RpcError (RpcErrorFilter). Bound on
 * the controller rather than as the microservice's global enhancers, so the hybrid application
 * connects its NATS server through Nest's public API alone (startRpcServer).
 */
export function RpcController(): ClassDecorator {
  return applyDecorators(Controller(), UsePipes(RpcValidationPipe), UseFilters(RpcErrorFilter));
}
