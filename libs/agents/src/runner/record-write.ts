import { specOf, type ChartValues } from '../domain/agent-spec.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import type { AgentWriteStore } from './ports.js';
import type { RecordOf, WriteChart } from './write-plan.js';


/** What landed, as the record needs it: the release, what helm applied, who acted, in which operation. */
export interface Landing {
  namespace: string;
  name: string;
  /** The helm revision deployed now (null: the release is gone). */
  helmRevision: number | null;
  /** The values helm reports for it; null: the record's own values (what was written). */
  values: ChartValues | null;
  /** The chart a create is recorded with when the record names none (the run's chart). */
  chart?: WriteChart;
  /** The chart the change applied, which a change's record names when it names none. */
  applied?: { ref: string; version?: string };
  actor: string;
  operationId: string;
}

/**
 * Records what landed, closing its operation as succeeded in the same transaction: the one place an
 * outcome is recorded, for the write runner (a plan's record), the recovery sweep (an interrupted
 * write that landed) and a reconcile action alike.
 */
export function recordWrite(store: AgentWriteStore, record: RecordOf, landed: Landing): Promise<AgentWithLastOperation | void> {
  const { helmRevision, actor, operationId } = landed;
  if ('create' in record) {
    const { chart = landed.chart, ...fields } = record.create;
    if (!chart) throw new Error(`the create of ${landed.namespace}/${landed.name} names no chart to record`);
    return store.recordCreate(landed.namespace, landed.name, chart, { ...fields, values: landed.values ?? fields.values, helmRevision, kind: 'create', actor, operationId });
  }
  if ('change' in record) {
    const { agent, chart = landed.applied, ...fields } = record.change;
    return store.recordChange(agent, { ...fields, values: landed.values ?? fields.values, helmRevision, actor, operationId, ...(chart && { chart }) });
  }
  if ('delete' in record) return store.recordDelete(record.delete.agent, operationId, actor);
  if ('originMove' in record) return store.recordOriginMove(record.originMove.agent, record.originMove.origin, operationId);
  if ('adoption' in record) {
    const revisions = record.adoption.history.map(({ values, helmRevision }, at) => ({ spec: specOf(values), values, helmRevision, kind: at === 0 ? ('create' as const) : ('update' as const), actor, operationId }));
    return store.recordAdoption(landed.namespace, landed.name, record.adoption.chart, revisions, operationId);
  }
  return store.succeedOperation(operationId);
}
