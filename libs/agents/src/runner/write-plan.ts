import type { Caller } from '@app/common';
import type { ChartSource, HelmClient } from '@app/helm';
import type { AgentRecord, AgentWithLastOperation, OperationRecord, RevisionKind, RevisionRecord } from '../persistence/records.js';
import type { AgentDto, ProblemDto } from '../api/responses.dto.js';
import type { AgentOrigin, AgentSpec, ChartValues, OperationIntent, OperationKind } from '../domain/agent-spec.js';
import type { LockMode } from './agent-lock.js';
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

/** The chart a write installs or upgrades to, with what the record names of it when it was resolved (chart-identity.ts). */
export type WriteChart = ChartSource & { source?: string; name?: string; chartVersion?: string | null };

/** What a plan's own steps may use: the store and helm to read, the chart of this run, who asks, and how answers show an agent. */
export interface PlanTools {
  repository: AgentWriteStore;
  helm: HelmClient;
  /** The chart writes install or upgrade to (ChartSources.configured, or a rollout's target). */
  chart: WriteChart;
  /** Who asks: its actor is recorded in the journal and the revisions. */
  caller: Caller;
  /** The agent as answers show it, with the last operation it was read with (no second read). */
  view(record: AgentWithLastOperation): AgentDto;
}

/** What the runner found before the plan decides: read under the agent's lock for a real run. */
export interface Found {
  /** The active agent, when the plan `expects` one (else null). */
  agent: AgentWithLastOperation | null;
  /** What the modelConfig check could not check (a missing ModelConfig is refused before). */
  modelWarnings: ProblemDto[];
  /** Operations an interrupted run left pending that a rollback was asked to free (freeStuckRelease). */
  stuck: OperationRecord[];
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
 * The state change itself, as data the runner carries out (one helm call for most). `chart` absent:
 * the chart of this run (PlanTools.chart).
 */
export type Change =
  | { install: { values: ChartValues } }
  /** `helm upgrade --install`; `first`: an upgrade run before it (a move across chart majors marks the old object to be kept). */
  | { upgrade: { values: ChartValues; chart?: ChartSource; first?: { chart: ChartSource; values: ChartValues } } }
  | { uninstall: true }
  /** No helm run: what stands already (an adoption, a blueprint move that keeps the values). */
  | { none: Applied }
  /** A change no data shape describes: freeing a release helm holds pending-*, a reconcile action. */
  | { run(operationId: string): Promise<Applied> };

/**
 * What is recorded once the change landed, as data (recorded by record-write.ts); the runner adds what helm applied (its
 * revision and values, `values` when helm reports none), the actor and the operation, and closes
 * the operation as succeeded in the same transaction. `chart` absent: the chart the change applied.
 */
export type RecordOf =
  | { create: { spec: AgentSpec; values: ChartValues; chart?: WriteChart; origin?: AgentOrigin } }
  | { change: { agent: AgentRecord; spec: AgentSpec; values: ChartValues; kind: RevisionKind; rolledBackTo?: number; chart?: { ref: string; version?: string }; origin?: AgentOrigin } }
  | { delete: { agent: AgentRecord } }
  /** The agent moved to another version of its blueprint, its values the same: no revision. */
  | { originMove: { agent: AgentRecord; origin: AgentOrigin } }
  /** No agent change: the operation closed as succeeded (a reconcile action that uninstalled a half-release). */
  | { nothing: true }
  /** A release the store did not know, its helm history (oldest first) recorded as revisions. */
  | { adoption: { chart: { ref: string; version?: string }; history: { values: ChartValues; helmRevision: number }[] } };

/** A write a plan decided: what to journal, the change, what to record. */
export interface Write {
  journal: JournalEntry;
  change: Change;
  record: RecordOf;
}

/**
 * One state change's own rules, as data where it can be; the order they run in is the runner's
 * (write-runner.ts), for every state change: a caller's create, update, delete and rollback, an
 * adoption, a reconcile action, a rollout's move. The runner reads what `expects` asks (under the
 * agent's lock for a real run, where another replica's write counts; without it for a dry run),
 * checks `modelConfig`, takes the plan's `write` (or asks `decide` for it, from what it found),
 * journals it, carries out its change, records it and composes the answer.
 */
export interface WritePlan<Decided extends Write, Answer> {
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
  /**
   * What the store must hold of the agent, checked by the runner: `absent`, no active agent of the
   * name (a create; else 409 naming update); `present`, the active agent (404), at `expectedVersion`
   * when given (412). Absent: the plan reads what it needs in `decide`.
   */
  expects?: 'absent' | { present: true; expectedVersion?: number };
  /**
   * The ModelConfig the write moves the agent to, checked against the namespace's ModelConfigs when it
   * is not the agent's own already (a missing one is refused 400; what could not be checked is warned).
   */
  modelConfig?: string;
  /** The write, when it is known before anything is read (a create). */
  write?: Decided;
  /** The write decided from what was found (an update's values from the agent's), with its own checks; a refusal is thrown. */
  decide?(found: Found, tools: PlanTools): Promise<Decided>;
  /** An answer when the run would change nothing: then nothing is journaled and no helm runs. */
  unchanged?(decided: Decided, found: Found, tools: PlanTools): Promise<Answer | undefined>;
  /** The dry run's answer: what the run would do; writes nothing. */
  preview(decided: Decided, found: Found, tools: PlanTools): Promise<Answer>;
  /** Runs after the outcome is recorded, still holding the agent (a reconcile action hands on what it recovered). */
  after?(decided: Decided, operationId: string, tools: PlanTools): Promise<void>;
  /** The answer, from the decision, what was applied and what was recorded; composed after the record transaction returned. */
  answer(decided: Decided, applied: Applied, recorded: AgentWithLastOperation, found: Found, tools: PlanTools): Promise<Answer>;
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
  trace?(decided: Decided): { name: string; attributes: Record<string, string> };
}
