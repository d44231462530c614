/** Who acts, as the journal records it: the same rule for both doors. */
export const ACTOR_MAX = 253;

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_IN_ACTOR = /[\u0000-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDFFF]/u;
const EVERY_NOT_IN_ACTOR = new RegExp(NOT_IN_ACTOR.source, 'gu');

/** Whether a name given by the caller (REST X-Actor) can be recorded as it is. */
export function isRecordableActor(actor: string): boolean {
  return actor.length > 0 && [...actor].length <= ACTOR_MAX && !NOT_IN_ACTOR.test(actor);
}

/** A name nobody checked (an MCP client's) made recordable: what the rule refuses replaced, cut to length. */
export function recordableActor(actor: string): string {
  return [...actor.replace(EVERY_NOT_IN_ACTOR, '?')].slice(0, ACTOR_MAX).join('');
}
