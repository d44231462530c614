import { randomUUID } from 'node:crypto';
import type { Prisma, StoreClient } from '@app/store';
import { fieldChanges } from '../domain/spec-diff.js';
import type { AgentRecord, OperationRecord } from '../persistence/records.js';

/** Every event type starts with it (docs/contract.md §14). */
export const EVENT_TYPE_PREFIX = 'io.agent-manager.';

/** The StoreGeneration counter events take their `seq` from. */
export const EVENTS_GENERATION = 'events';

/** What a store transaction needs to write an event. */
export type EventTx = Pick<StoreClient, 'storeGeneration' | 'changeEvent'>;

/** An event before it is written: its type after the prefix (`agent.updated`), subject and data. */
export interface NewChangeEvent {
  /** `agent.created`, `blueprint.updated`, `change.approved`, `rollout.succeeded`, … */
  type: string;
  /** `ns/name` for an agent or a change, the blueprint's name, the rollout's id. */
  subject: string;
  /** The agent's namespace; absent for cluster-wide subjects (blueprints, rollouts). */
  namespace?: string;
  data: Record<string, unknown>;
}

/**
 * Writes an event to the outbox in the caller's transaction: it commits with the write it reports
 * or not at all. Call it last in the transaction: the counter's row it bumps stays locked until
 * commit (PostgreSQL), which gives out `seq` in commit order, and taking it last keeps one lock
 * order for every writer (no deadlock between an agent's record and a blueprint's write).
 */
export async function appendEvent(tx: EventTx, event: NewChangeEvent): Promise<void> {
  const { value } = await tx.storeGeneration.upsert({
    where: { key: EVENTS_GENERATION },
    create: { key: EVENTS_GENERATION, value: 1 },
    update: { value: { increment: 1 } },
  });
  await tx.changeEvent.create({
    data: {
      id: randomUUID(),
      seq: value,
      type: `${EVENT_TYPE_PREFIX}${event.type}`,
      source: eventSource(event),
      subject: event.subject,
      namespace: event.namespace ?? null,
      time: new Date(),
      data: event.data as Prisma.InputJsonValue,
    },
  });
}

/** `/agent-manager/namespaces/<ns>` for a namespaced subject, `/agent-manager/<kind>s` otherwise. */
function eventSource(event: NewChangeEvent): string {
  if (event.namespace) return `/agent-manager/namespaces/${event.namespace}`;
  return `/agent-manager/${event.type.split('.')[0]}s`;
}

/** What happened to an agent, as its event types name it. */
export type AgentEventKind = 'created' | 'updated' | 'deleted' | 'rolled_back' | 'adopted' | 'reconciled';

/**
 * The event of an agent's recorded write: who, which operation, the revision it made, and the
 * spec's field changes (before → after; `null` before a create, after a delete).
 */
export function agentEvent(
  kind: AgentEventKind,
  agent: Pick<AgentRecord, 'id' | 'namespace' | 'name' | 'version' | 'revision' | 'helmRevision'> & { chart?: AgentRecord['chart']; origin?: AgentRecord['origin'] },
  operation: Pick<OperationRecord, 'id' | 'kind' | 'actor'>,
  specs: { before: object | null; after: object | null },
  extra: Record<string, unknown> = {},
): NewChangeEvent {
  return {
    type: `agent.${kind}`,
    subject: `${agent.namespace}/${agent.name}`,
    namespace: agent.namespace,
    data: {
      operationId: operation.id,
      operation: operation.kind,
      actor: operation.actor,
      agentId: agent.id,
      version: agent.version,
      revision: agent.revision,
      helmRevision: agent.helmRevision,
      ...(agent.chart && { chart: agent.chart }),
      ...(agent.origin && { blueprint: agent.origin }),
      changes: fieldChanges(specs.before, specs.after),
      ...extra,
    },
  };
}
