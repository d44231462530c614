/**
 * How an answer travels back on REST besides its JSON body, as data the REST door applies: the
 * status when it depends on the answer, the ETag (an agent's version, for If-Match on the next
 * write), the Location of what was made, or a text sent instead of the JSON (export's YAML).
 */
export interface RestReply {
  status?: number;
  /** The agent's version; the door sends it as the strong ETag "<version>". */
  etag?: number;
  location?: string;
  text?: { contentType: string; text: string };
}

/** An agent as an answer carries it: its version is its ETag. */
type Versioned = { version: number } | null | undefined;
/** A write's answer: the agent written, or the change an approval rule made of the write instead. */
interface WriteAnswer {
  agent?: Versioned;
  change?: { location: string } | null;
}

/** A write an approval rule made a proposal: 202 Accepted, Location: the change (docs/approvals.md). */
function proposed(change: { location: string }): RestReply {
  return { status: 202, location: change.location };
}

/**
 * The shapes of reply the routes share, each defined once: a route names one (`reply: replies.created`);
 * a reply of its own (a rollout's Location, a blueprint's dry-run status, export's text) is a pure
 * function to the same RestReply.
 */
export const replies = {
  /** An agent read: its version as the ETag. */
  agent: (agent: Versioned): RestReply => ({ etag: agent?.version }),
  /** A create: a proposal 202 + Location; else a dry run 200, or created 201, with the ETag of the agent. */
  created: (result: WriteAnswer & { dryRun?: boolean }): RestReply =>
    result.change ? proposed(result.change) : { status: result.dryRun ? 200 : 201, etag: result.agent?.version },
  /** An update or rollback: a proposal 202 + Location; else the route's status with the ETag of the agent. */
  written: (result: WriteAnswer): RestReply => (result.change ? proposed(result.change) : { etag: result.agent?.version }),
  /** A delete: a proposal 202 + Location; else the route's status, no ETag (the agent is gone). */
  removed: (result: WriteAnswer): RestReply => (result.change ? proposed(result.change) : {}),
} as const;
