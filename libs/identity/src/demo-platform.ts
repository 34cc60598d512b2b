/**
 * The demo platform: `npm run demo` creates it and fills it with a week of activity, and the
 * development identity provider that `npm start` runs (DESIGN §2) signs its owner in, so the
 * dashboard shows that week out of the box. One place for both names.
 */
export const DEMO_AGENT_ID = 'agent_demo';

/** `sub` of the demo owner's ID token: the platform's owner_uid (DESIGN §3). */
export const DEMO_OWNER_UID = 'demo-owner';
