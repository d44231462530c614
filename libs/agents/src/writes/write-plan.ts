import type { ChartSource, HelmClient } from '@app/helm';
import type { AgentWithLastOperation, OperationRecord, RevisionRecord } from '../agents.records.js';
import type { AgentsRepository, RecordedAnswer } from '../agents.repository.js';
import type { AgentDto } from '../agents.responses.js';
import type { ChartValues, OperationIntent, OperationKind } from '../agents.types.js';

/** What the one helm call of a write left behind, as helm reported it. */
export interface Applied {
  /** The helm release revision now deployed; null when the release is gone (delete). */
  helmRevision: number | null;
  /** The values helm recorded for that revision. */
  values: ChartValues | null;
  /** The manifest helm applied ('' for a delete). */
  manifests: string;
  /** Whether helm removed a release (delete only). */
  releaseRemoved?: boolean;
  /** The chart helm applied, when it is the one configured now (an upgrade); a `helm rollback` restores a revision's own chart. */
  chart?: { ref: string; version?: string };
}

/** What an earlier run of a request recorded: the agent now, the revision it wrote and the one before, helm's manifest of it. */
export interface Landed {
  agent: AgentDto;
  revision: RevisionRecord | null;
  previous: RevisionRecord | null;
  manifests: string;
}

/** What a plan may use: the store, helm, the chart, and the agent's view for answers. */
export interface PlanTools {
  repository: AgentsRepository;
  helm: HelmClient;
  chart: ChartSource;
  /** Who acts (the operation context's actor), for the journal and the revisions. */
  actor: string;
  /** The agent as answers show it, with the last operation it was read with (no second read). */
  view(record: AgentWithLastOperation): AgentDto;
}

/**
 * One write operation's own rules; the order they run in is the pipeline's (write-pipeline.ts).
 * `check` reads the store only: under the agent's lock for a real write, where another replica's
 * write counts, and without it for a dry run.
 */
export interface WritePlan<Checked, Answer> {
  kind: OperationKind;
  namespace: string;
  name: string;
  dryRun: boolean;
  idempotencyKey?: string;
  /** The request as journaled and hashed for idempotency (without the key). */
  request: Record<string, unknown>;
  check(): Promise<Checked>;
  /** An answer when the write would change nothing: then no lock is taken and no helm runs. */
  unchanged?(checked: Checked): Promise<Answer | undefined>;
  /** The dry run's answer: what the write would do, from the checked state; writes nothing. */
  preview(checked: Checked): Promise<Answer>;
  /** What the journal records before helm runs, for recovery after a crash. */
  journal(checked: Checked): { agentId?: string; intent?: OperationIntent; baseHelmRevision: number | null };
  /** The one helm call. `stuck` holds interrupted operations a rollback was asked to free. */
  apply(checked: Checked, stuck: OperationRecord[]): Promise<Applied>;
  /**
   * Records what helm applied, closing the operation as succeeded in the same transaction — and,
   * for a request sent with an idempotency key, keeping its answer there too (`keep`). It returns
   * the agent as recorded with that operation as its last (no second read for the answer).
   */
  record(checked: Checked, applied: Applied, operationId: string, keep?: RecordedAnswer): Promise<AgentWithLastOperation>;
  /** The answer, from the checked state, what helm applied and the agent as recorded. */
  answer(checked: Checked, applied: Applied, agent: AgentDto): Promise<Answer>;
  /**
   * The answer re-derived from what an earlier run of the same request recorded, for a retry
   * when that run could not answer (its replica died, or the store failed while recording).
   */
  recorded(landed: Landed): Promise<Answer>;
  /** Only a rollback asks to free a release helm holds pending-* from an interrupted run. */
  freeStuckRelease?: boolean;
}
