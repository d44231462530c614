import type { Caller } from '@app/common';
import type { ChartSource, HelmClient } from '@app/helm';
import type { AgentWithLastOperation, OperationRecord, RevisionRecord } from '../persistence/records.js';
import type { AgentDto } from '../api/responses.dto.js';
import type { ChartValues, OperationIntent, OperationKind } from '../domain/agent-spec.js';
import type { LockMode } from './agent-lock.js';
import type { ModelConfigGate } from '../model-configs/model-config-check.js';
import type { AgentWriteStore } from './ports.js';

/** What the state change of a plan left behind (for most, what its one helm call did, as helm reported it). */
export interface Applied {
  /** The helm release revision now deployed; null when the release is gone (delete). */
  helmRevision: number | null;
  /** The values helm recorded for that revision. */
  values: ChartValues | null;
  /** The manifest helm applied ('' for a delete, or a change that ran no helm). */
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

/** What a plan may use: the store, helm, the chart every write uses, and who asks. */
export interface PlanTools {
  repository: AgentWriteStore;
  helm: HelmClient;
  /**
   * The chart writes install or upgrade to (ChartSources.configured, or a rollout's target); `source`,
   * `name` and `chartVersion` when it was resolved: what the record names (chart-identity.ts).
   */
  chart: ChartSource & { source?: string; name?: string; chartVersion?: string | null };
  /** Who asks: its actor is recorded in the journal and the revisions. */
  caller: Caller;
  /** The agent as answers show it, with the last operation it was read with (no second read). */
  view(record: AgentWithLastOperation): AgentDto;
  /** Checks a modelConfig against the namespace's ModelConfigs (create and update; absent: not checked). */
  modelConfigs?: ModelConfigGate;
}

/** What the journal records before the state change runs, for recovery after a crash. */
export interface JournalEntry {
  agentId?: string;
  intent?: OperationIntent;
  baseHelmRevision: number | null;
  /** The journal's kind when it is not the plan's (a reconcile action journals the write it carries out). */
  kind?: OperationKind;
  /** The request as journaled, when it is only known once checked (an adoption's helm revisions). */
  request?: Record<string, unknown>;
  /** What the caller is told runs now (default: the helm call of the plan's kind). */
  step?: string;
}

/**
 * One state change's own rules; the order they run in is the runner's (write-runner.ts), for every
 * state change: a caller's create, update, delete and rollback, an adoption, a reconcile action.
 * `check` reads the store (and, for some, helm): under the agent's lock for a real run, where another
 * replica's write counts, and without it for a dry run.
 */
export interface WritePlan<Checked, Answer, Recorded = AgentWithLastOperation> {
  kind: OperationKind;
  /** The operation as the policy and the audit columns name it (default `<kind>_agent`). */
  operation?: string;
  namespace: string;
  name: string;
  dryRun: boolean;
  idempotencyKey?: string;
  /** The request as journaled and hashed for idempotency (without the key). */
  request: Record<string, unknown>;
  /** How the agent is taken (default `write`: a caller's write, waiting in line). */
  lock?: LockMode;
  /**
   * Whether operations an earlier writer left pending are settled first (default true). A reconcile
   * action does not: its pass resolved what could be, and it decides about the rest itself.
   */
  settle?: boolean;
  check(): Promise<Checked>;
  /** An answer when the run would change nothing: then nothing is journaled and no helm runs. */
  unchanged?(checked: Checked): Promise<Answer | undefined>;
  /** The dry run's answer: what the run would do, from the checked state; writes nothing. */
  preview(checked: Checked): Promise<Answer>;
  /** What the journal records before the change runs. */
  journal(checked: Checked): JournalEntry;
  /** The state change itself (for most, one helm call). `stuck` holds interrupted operations a rollback was asked to free. */
  apply(checked: Checked, stuck: OperationRecord[], operationId: string): Promise<Applied>;
  /**
   * Records what was applied, closing the operation as succeeded in the same transaction; for a
   * caller's write it returns the agent as recorded with that operation as its last (no second read
   * for the answer).
   */
  record(checked: Checked, applied: Applied, operationId: string): Promise<Recorded>;
  /** Runs after the outcome is recorded, still holding the agent (a reconcile action hands on what it recovered). */
  after?(checked: Checked, operationId: string): Promise<void>;
  /** The answer, from the checked state, what was applied and what `record` returned; composed after the record transaction returned. */
  answer(checked: Checked, applied: Applied, recorded: Recorded): Promise<Answer>;
  /**
   * The answer re-derived from what an earlier run of the same request recorded, for a retry
   * when that run could not answer (its replica died, or the store failed while recording).
   */
  recorded?(landed: Landed): Promise<Answer>;
  /**
   * Whether the write is refused when Flux or Argo CD manages the release (default true: every
   * write, an adoption too). A create is not asked: helm refuses a name whose release exists.
   */
  checkOwner?: boolean;
  /** Only a rollback asks to free a release helm holds pending-* from an interrupted run. */
  freeStuckRelease?: boolean;
  /** A root span around the change when it acts (a reconcile action), named and described by it. */
  trace?(checked: Checked): { name: string; attributes: Record<string, string> };
}
