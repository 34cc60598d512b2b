import { FastCheck } from '#libs/contracts';

/** The query of an endpoint that takes no query parameters: any parameter is refused (422). */
@FastCheck((query) => typeof query === 'object' && query !== null && Object.keys(query).length === 0)
export class NoQueryDto {}
