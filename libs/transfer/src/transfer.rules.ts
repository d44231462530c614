import { fieldChanges, type FieldChange } from '@app/agents';
import type { FleetAgent, FleetBlueprint, FleetBlueprintBody, FleetSelection } from './transfer.document.js';
import { canonicalBody, canonicalSpec } from './transfer.document.js';

/** What an import does with one agent or blueprint. */
export type PlannedAction = 'create' | 'update' | 'unchanged' | 'conflict' | 'prune';

/** An active agent as the store holds it, as far as planning needs it. */
export interface StoredAgent {
  namespace: string;
  name: string;
  version: number;
  spec: Record<string, unknown>;
  origin: { blueprint: string; version: number } | null;
}

/** A blueprint as the store holds it, as far as planning needs it. */
export interface StoredBlueprint {
  name: string;
  activeVersion: number;
  latestVersion: number;
  body: FleetBlueprintBody;
}

export interface AgentPlan {
  namespace: string;
  name: string;
  action: PlannedAction;
  /** The spec fields that move (create: every field; prune: every field going away). */
  changes: FieldChange[];
  /** The agent's version in the store (absent for a create): the write's If-Match. */
  storedVersion?: number;
  /** Why a conflict is one. */
  reason?: string;
}

export interface BlueprintPlan {
  name: string;
  action: Exclude<PlannedAction, 'prune'>;
  changes: FieldChange[];
  /** The blueprint's latest version in the store (absent for a create): the save's expectedVersion. */
  storedVersion?: number;
  reason?: string;
}

/**
 * One agent of the document against the store: absent → create; the same spec → unchanged
 * (whatever the versions say, so re-running an import is a no-op); another spec while the store's
 * version is not the one the document recorded → conflict (someone changed it since the export:
 * the import would overwrite their change); else update. A document entry without a version is
 * one a person wrote: the document wins.
 */
export function planAgent(entry: FleetAgent, stored: StoredAgent | null): AgentPlan {
  const ref = { namespace: entry.namespace, name: entry.name };
  const spec = canonicalSpec(entry.spec);
  if (!stored) return { ...ref, action: 'create', changes: fieldChanges(null, spec) };
  const changes = fieldChanges(canonicalSpec(stored.spec), spec);
  if (changes.length === 0) return { ...ref, action: 'unchanged', changes, storedVersion: stored.version };
  if (entry.version !== undefined && entry.version !== stored.version) {
    return {
      ...ref,
      action: 'conflict',
      changes,
      storedVersion: stored.version,
      reason: `${entry.namespace}/${entry.name} is at version ${stored.version} in the store, not ${entry.version} as exported: it changed since; export again and re-apply your edit, or drop version from the entry to overwrite it`,
    };
  }
  return { ...ref, action: 'update', changes, storedVersion: stored.version };
}

/** One blueprint of the document against the store, by the same rules as an agent (its version: the active one). */
export function planBlueprint(entry: FleetBlueprint, stored: StoredBlueprint | null): BlueprintPlan {
  const body = canonicalBody(entry);
  if (!stored) return { name: entry.name, action: 'create', changes: fieldChanges(null, body) };
  const changes = fieldChanges(canonicalBody(stored.body), body);
  if (changes.length === 0) return { name: entry.name, action: 'unchanged', changes, storedVersion: stored.latestVersion };
  if (entry.version !== undefined && entry.version !== stored.activeVersion) {
    return {
      name: entry.name,
      action: 'conflict',
      changes,
      storedVersion: stored.latestVersion,
      reason: `blueprint ${entry.name} is at version ${stored.activeVersion} in the store, not ${entry.version} as exported: it changed since; export again and re-apply your edit, or drop version from the entry to overwrite it`,
    };
  }
  return { name: entry.name, action: 'update', changes, storedVersion: stored.latestVersion };
}

/** Whether an agent is one the selection picks: in one of its namespaces, carrying each of its labels, made from its blueprint. */
export function selects(selection: FleetSelection, agent: StoredAgent): boolean {
  if (selection.namespaces?.length && !selection.namespaces.includes(agent.namespace)) return false;
  const labels = (agent.spec.labels ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(selection.labels ?? {})) if (labels[key] !== value) return false;
  if (selection.blueprint && agent.origin?.blueprint !== selection.blueprint) return false;
  return true;
}

/**
 * The whole agent plan: each document agent against the store, then, with `prune`, each stored
 * agent of the selection the document does not list (deleted by the import). An agent outside the
 * selection is never pruned: the document does not speak for it. Ordered by namespace and name,
 * creates and updates before prunes.
 */
export function planAgents(agents: FleetAgent[], stored: StoredAgent[], selection: FleetSelection, prune: boolean): AgentPlan[] {
  const byKey = new Map(stored.map((a) => [`${a.namespace}/${a.name}`, a]));
  const listed = new Set(agents.map((a) => `${a.namespace}/${a.name}`));
  const plans = agents.map((entry) => planAgent(entry, byKey.get(`${entry.namespace}/${entry.name}`) ?? null));
  const pruned = prune
    ? stored
        .filter((a) => !listed.has(`${a.namespace}/${a.name}`) && selects(selection, a))
        .map((a): AgentPlan => ({ namespace: a.namespace, name: a.name, action: 'prune', changes: fieldChanges(canonicalSpec(a.spec), null), storedVersion: a.version }))
    : [];
  const order = (a: AgentPlan, b: AgentPlan) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...plans.sort(order), ...pruned.sort(order)];
}

/** The whole blueprint plan, by name. Blueprints are never pruned: agents of other documents may hold them. */
export function planBlueprints(blueprints: FleetBlueprint[], stored: StoredBlueprint[]): BlueprintPlan[] {
  const byName = new Map(stored.map((b) => [b.name, b]));
  return blueprints.map((entry) => planBlueprint(entry, byName.get(entry.name) ?? null)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
