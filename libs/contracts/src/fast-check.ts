/**
 * The link between a request DTO and its hot-path pre-check (the checks are in
 * fast-validation.ts and next to the payouts DTOs). Kept apart, without imports, so that the
 * DTO files can use the decorator whatever the order in which the modules load.
 */
const fastChecks = new WeakMap<object, (payload: unknown) => boolean>();

/**
 * Attaches a hot-path pre-check to a request DTO: the transport's validation pipe skips
 * class-validator when the check says yes (it must accept only what the DTO accepts; a
 * property test holds each check to that) and asks class-validator when it says no.
 */
export function FastCheck(check: (payload: unknown) => boolean): ClassDecorator {
  return (target) => {
    fastChecks.set(target, check);
  };
}

/** The pre-check FastCheck attached to a DTO class, if any. */
export function fastCheckOf(type: unknown): ((payload: unknown) => boolean) | undefined {
  return typeof type === 'function' ? fastChecks.get(type) : undefined;
}
