/**
 * The demo platform of a developer machine (DESIGN §2): `npm run demo` creates and fills it, and
 * the development identity provider signs its owner in. One place for both names, so the
 * platform's `owner_uid` and the ID token's `sub` can never drift apart.
 */
export const DEMO_PLATFORM = {
  /** The platform's agent_id. */
  agentId: 'agent_demo',
  /** The platform's owner_uid, which is the `sub` of the demo owner's ID tokens. */
  ownerUid: 'demo-owner',
} as const;

/** The demo owner's sign-in name at the development identity provider (its password is generated at each start). */
export const DEMO_OWNER_USERNAME = 'demo';
