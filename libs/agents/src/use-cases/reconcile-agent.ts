import type { ReleaseRef } from '@app/helm';
import { chartValuesOf, type AgentRecord, type OperationRecord } from '../persistence/records.js';
import type { OperationIntent, OperationKind } from '../domain/agent-spec.js';
import type { ReconcileAction } from '../domain/recovery-decision.js';
import type { Applied, JournalEntry, PlanTools, RecordOf, Write, WritePlan } from '../runner/write-plan.js';

export interface ReconcileItem {
  namespace: string;
  name: string;
  /** What the decision table chose, with why for a report. */
  action: ReconcileAction['action'];
  finding?: string;
  detail: string;
  /** Set when the action was carried out (never on a dry run or a report). */
  done: boolean;
  /** Set when the agent was skipped (a write holds it) or the action failed. */
  error?: string;
}

/** What decideReconcile chose for an agent, with what it was chosen from. */
export interface Decided {
  action: ReconcileAction;
  agent: AgentRecord | null;
  /** The journal's create of this release and what it meant to write (its blueprint origin too). */
  intent: (OperationIntent & { operationId: string; state: string }) | null;
}

/** What a reconcile action needs besides the plan tools: the decision (reconcile.service.ts) and the recovery's closing of what it freed. */
export interface ReconcileParts {
  decide(ref: ReleaseRef): Promise<Decided>;
  supersede(ops: OperationRecord[], by: string): Promise<void>;
}

/**
 * A reconcile action on one agent, run by the write runner as the service's own work: the agent
 * taken as the service takes it (a write holding it is left alone), nothing settled first (the
 * pass resolved what could be, the decision covers the rest), journaled as `reconcile_agents` by
 * `reconciler@<replica>`, and traced when it acts.
 */
export function reconcileAgent(parts: ReconcileParts, ref: ReleaseRef, dryRun: boolean): WritePlan<Decided & Write, ReconcileItem> {
  const key = `${ref.namespace}/${ref.name}`;
  const item = ({ action }: Decided, done: boolean): ReconcileItem => ({
    ...ref, action: action.action, detail: describe(action), done, ...(action.action === 'report' ? { finding: action.finding } : {}),
  });
  return {
    kind: 'update',
    operation: 'reconcile_agents',
    namespace: ref.namespace,
    name: ref.name,
    dryRun,
    request: {},
    lock: 'service',
    settle: false,
    async decide(_found, tools) {
      const decided = await parts.decide(ref);
      return {
        ...decided,
        journal: journal(decided),
        change: { run: (operationId) => apply(tools, decided, operationId) },
        record: record(decided),
      };
    },
    unchanged: async (decided) => (decided.action.action === 'none' || decided.action.action === 'report' ? item(decided, false) : undefined),
    preview: async (decided) => item(decided, false),
    after: ({ action, intent }, operationId, tools) => after(tools, action, intent, operationId),
    answer: async (decided) => item(decided, true),
    trace: ({ action }) => ({ name: `reconcile ${action.action}`, attributes: { 'agent_manager.reconcile.action': action.action, 'agent_manager.agent': key } }),
  };

  function journal({ action, agent, intent }: Decided): JournalEntry {
    const request = { reconcile: action.action, ...(intent ? { recovers: intent.operationId } : {}) };
    const entry = (kind: OperationKind, journaled?: OperationIntent, agentId?: string): JournalEntry => ({ kind, request, intent: journaled, agentId, baseHelmRevision: null, step: `reconciling ${key}: ${describe(action)}` });
    switch (action.action) {
      case 'record-create': return entry('create', { spec: intent!.spec, values: intent!.values, origin: intent!.origin, chart: intent!.chart });
      case 'uninstall': return entry('delete');
      // From the intent: the create's blueprint origin goes with it (a record keeps its own).
      case 'reinstall': {
        const source = action.from === 'record' && agent ? { spec: agent.spec, values: agent.values } : { spec: intent!.spec, values: intent!.values, origin: intent!.origin };
        return entry(action.from === 'record' ? 'update' : 'create', source, agent?.id);
      }
      default: return agent ? entry('rollback', { spec: agent.spec, values: agent.values }, agent.id) : entry('rollback');
    }
  }

  async function apply(tools: PlanTools, { action, agent, intent }: Decided, operationId: string): Promise<Applied> {
    const none = { helmRevision: null, values: null, manifests: '' };
    switch (action.action) {
      case 'record-create': {
        const info = await tools.helm.status(ref);
        return { helmRevision: info?.revision ?? 1, values: intent!.values, manifests: '' };
      }
      case 'uninstall':
        await tools.helm.uninstall(ref);
        return none;
      case 'reinstall': {
        const values = action.from === 'record' && agent ? agent.values : intent!.values;
        await tools.helm.uninstall(ref);
        const installed = await tools.helm.install(ref, tools.chart, values);
        return { helmRevision: installed.revision, values: chartValuesOf(installed.values), manifests: installed.manifest };
      }
      case 'rollback': {
        const stuck = agent ? (await tools.repository.pendingOperations(ref)).filter((op) => op.id !== operationId) : []; // not this action's own entry
        await tools.helm.rollback(ref, action.to);
        if (!agent) return none;
        const info = await tools.helm.status(ref);
        await parts.supersede(stuck, operationId);
        return { helmRevision: info?.revision ?? null, values: chartValuesOf(info?.values ?? {}), manifests: '' };
      }
      default:
        return none;
    }
  }

  /** What the action records, as data (record-write.ts); helm's values and revision come from what it applied. */
  function record({ action, agent, intent }: Decided): RecordOf {
    if (action.action === 'record-create' || (action.action === 'reinstall' && !agent)) {
      // A create that landed is recorded with the chart it installed (its intent's, journaled by the runner); a reinstall with the one it used now.
      const chart = action.action === 'record-create' ? intent!.chart : undefined;
      return { create: { spec: intent!.spec, values: intent!.values, origin: intent!.origin, ...(chart && { chart }) } };
    }
    if (action.action === 'reinstall' && agent) {
      const fromRecord = action.from === 'record';
      return { change: { agent, spec: fromRecord ? agent.spec : intent!.spec, values: fromRecord ? agent.values : intent!.values, kind: fromRecord ? 'update' : 'create', ...(!fromRecord && { origin: intent!.origin }) } };
    }
    if (action.action === 'rollback' && agent) return { change: { agent, spec: agent.spec, values: agent.values, kind: 'rollback' } };
    return { nothing: true };
  }

  async function after(tools: PlanTools, action: ReconcileAction, intent: Decided['intent'], operationId: string): Promise<void> {
    if (intent?.state === 'pending') await parts.supersede([(await tools.repository.operation(intent.operationId))!], operationId);
    // The create's intent is what landed now: a retry of it with its idempotency key answers from this operation.
    if (intent && (action.action === 'record-create' || (action.action === 'reinstall' && action.from === 'intent'))) {
      await tools.repository.relinkKeys(intent.operationId, operationId);
    }
  }
}

export function describe(action: ReconcileAction): string {
  switch (action.action) {
    case 'none': return 'store, helm release and Agent agree';
    case 'record-create': return 'helm deployed a create the store did not record: record it (recovered)';
    case 'uninstall': return `uninstall the half-release: ${action.why}`;
    case 'reinstall': return `helm left the install pending: install it again from the ${action.from === 'record' ? "agent's record" : "create's intent"}`;
    case 'rollback': return `helm left a change pending: roll back to revision ${action.to}, the last deployed`;
    case 'report': return action.why;
  }
}
