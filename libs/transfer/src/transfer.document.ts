import { parseDocument, stringify } from 'yaml';
import { CreateAgentDto } from '@app/agents';
import { AppError, type ErrorDetail } from '@app/common';
import { readInput } from '@app/doors';
import { BLUEPRINT_NAME, bodyProblems, CREATE_ARGUMENTS } from '@app/blueprints';

/** The header every fleet document carries: what it is and which shape it has. */
export const FLEET_API_VERSION = 'agent-manager.io/v1';
export const FLEET_KIND = 'AgentFleet';

/** The spec fields of an agent, in the order a document writes them. */
const SPEC_ORDER = ['modelConfig', 'toolset', 'description', 'displayName', 'systemMessage', 'labels', 'annotations'] as const;

/** Which agents a document stands for: the filters it was exported with, and what `prune` acts within. */
export interface FleetSelection {
  namespaces?: string[];
  /** Every label must match (`key: value`). */
  labels?: Record<string, string>;
  /** Only agents created from this blueprint (and only this blueprint). */
  blueprint?: string;
}

/** An agent as a document holds it: never its values, secrets, revisions or journal. */
export interface FleetAgent {
  namespace: string;
  name: string;
  /** The agent's version when it was exported: an import refuses to overwrite an agent changed since (conflict). Absent: the document wins. */
  version?: number;
  /** The blueprint it was created from, and the version it held. */
  blueprint?: { name: string; version: number };
  /** The chart it runs (informational: an import writes with the configured chart). */
  chart?: { name: string; version: string | null };
  spec: Record<string, unknown>;
}

/** A blueprint body as a document holds it (the create arguments of blueprint.rules.ts). */
export interface FleetBlueprintBody {
  description: string;
  fixed: Record<string, unknown>;
  open: string[];
  defaults: Record<string, unknown>;
}

export interface FleetBlueprint extends FleetBlueprintBody {
  name: string;
  /** The active version when it was exported: an import refuses to overwrite a blueprint changed since (conflict). */
  version?: number;
  /** Every stored version, oldest first (export --blueprint-history): for review; an import writes the active body only. */
  history?: (FleetBlueprintBody & { version: number; note?: string })[];
}

export interface FleetDocument {
  apiVersion: string;
  kind: string;
  selection: FleetSelection;
  /** Agents of the selection the document does not list are deleted by an import (also `?prune=true`). */
  prune?: boolean;
  blueprints: FleetBlueprint[];
  agents: FleetAgent[];
}

/** A map with its keys sorted by code point: the one key order a document writes maps in. */
export function sortedMap<T>(map: Record<string, T> | undefined): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(map ?? {}).sort()) out[key] = map![key];
  return out;
}

/** A value with every map's keys sorted (lists keep their order: a toolset's order is what the chart gets). */
function deepSorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSorted);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = deepSorted((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** A spec in the document's field order, empty fields left out (the chart renders them as nothing). */
export function canonicalSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of SPEC_ORDER) {
    const value = spec[field];
    if (value === undefined || value === null || value === '') continue;
    if ((field === 'labels' || field === 'annotations') && Object.keys(value as object).length === 0) continue;
    out[field] = field === 'labels' || field === 'annotations' ? sortedMap(value as Record<string, string>) : field === 'toolset' ? [...(value as string[])] : value;
  }
  return out;
}

/** A blueprint body in the document's field order, its maps sorted and `open` in the create arguments' order. */
export function canonicalBody(body: { description?: unknown; fixed?: unknown; open?: unknown; defaults?: unknown }): FleetBlueprintBody {
  const open = Array.isArray(body.open) ? body.open : [];
  return {
    description: typeof body.description === 'string' ? body.description : '',
    fixed: deepSorted(body.fixed ?? {}) as Record<string, unknown>,
    open: CREATE_ARGUMENTS.filter((name) => open.includes(name)),
    defaults: deepSorted(body.defaults ?? {}) as Record<string, unknown>,
  };
}

/**
 * The document with every key in its one order: header, selection, prune, blueprints by name,
 * agents by namespace then name (code point order, as the store lists them). Rendering it twice
 * gives the same bytes: nothing in it is a time or depends on the order rows were read in.
 */
export function canonicalDocument(doc: FleetDocument): FleetDocument {
  const selection: FleetSelection = {};
  if (doc.selection.namespaces?.length) selection.namespaces = [...new Set(doc.selection.namespaces)].sort();
  if (doc.selection.labels && Object.keys(doc.selection.labels).length > 0) selection.labels = sortedMap(doc.selection.labels);
  if (doc.selection.blueprint) selection.blueprint = doc.selection.blueprint;
  const blueprints = [...doc.blueprints].sort((a, b) => compare(a.name, b.name)).map((b) => ({
    name: b.name,
    ...(b.version !== undefined && { version: b.version }),
    ...canonicalBody(b),
    ...(b.history && { history: b.history.map((h) => ({ version: h.version, ...(h.note && { note: h.note }), ...canonicalBody(h) })) }),
  }));
  const agents = [...doc.agents]
    .sort((a, b) => compare(a.namespace, b.namespace) || compare(a.name, b.name))
    .map((a) => ({
      namespace: a.namespace,
      name: a.name,
      ...(a.version !== undefined && { version: a.version }),
      ...(a.blueprint && { blueprint: { name: a.blueprint.name, version: a.blueprint.version } }),
      ...(a.chart && { chart: { name: a.chart.name, version: a.chart.version } }),
      spec: canonicalSpec(a.spec),
    }));
  return { apiVersion: FLEET_API_VERSION, kind: FLEET_KIND, selection, ...(doc.prune !== undefined && { prune: doc.prune }), blueprints, agents };
}

/** The document as YAML: canonical order, no line folding (a long system message stays one scalar), no anchors. */
export function renderYaml(doc: FleetDocument): string {
  return stringify(canonicalDocument(doc), { lineWidth: 0, aliasDuplicateObjects: false });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The agents of a document one file each (export --per-agent): the header, selection and blueprints in one, each agent in its own. */
export function splitDocument(doc: FleetDocument): { path: string; text: string }[] {
  const canonical = canonicalDocument(doc);
  const files = [{ path: 'fleet.yaml', text: renderYaml({ ...canonical, agents: [] }) }];
  for (const agent of canonical.agents) {
    files.push({ path: `${agent.namespace}/${agent.name}.yaml`, text: renderYaml({ apiVersion: FLEET_API_VERSION, kind: FLEET_KIND, selection: {}, blueprints: [], agents: [agent] }) });
  }
  return files;
}

/**
 * One document from several (a folder export --per-agent wrote): the agents and blueprints of all,
 * the selection and prune of the one that states them (fleet.yaml). Each text is parsed and checked
 * on its own first, so a problem names the file.
 */
export function mergeDocuments(parts: { path: string; text: string }[]): FleetDocument {
  const docs = parts.map(({ path, text }) => {
    try {
      return readDocument(text);
    } catch (error) {
      if (error instanceof AppError) throw AppError.invalid(error.details.map((d) => ({ ...d, path: `${path}: ${d.path}` })), `${path}: ${error.message}`);
      throw error;
    }
  });
  const stating = docs.filter((d) => Object.keys(d.selection).length > 0 || d.prune !== undefined);
  if (stating.length > 1) throw AppError.invalid([{ path: 'selection', message: 'more than one file states a selection or prune: keep them in fleet.yaml only' }]);
  const merged: FleetDocument = {
    apiVersion: FLEET_API_VERSION,
    kind: FLEET_KIND,
    selection: stating[0]?.selection ?? {},
    ...(stating[0]?.prune !== undefined && { prune: stating[0].prune }),
    blueprints: docs.flatMap((d) => d.blueprints),
    agents: docs.flatMap((d) => d.agents),
  };
  const problems = duplicates(merged);
  if (problems.length > 0) throw AppError.invalid(problems);
  return merged;
}

const DOCUMENT_FIELDS = ['apiVersion', 'kind', 'selection', 'prune', 'blueprints', 'agents'];
const AGENT_FIELDS = ['namespace', 'name', 'version', 'blueprint', 'chart', 'spec'];
const BLUEPRINT_FIELDS = ['name', 'version', 'description', 'fixed', 'open', 'defaults', 'history'];
const HISTORY_FIELDS = ['version', 'note', 'description', 'fixed', 'open', 'defaults'];

/**
 * A document from its text (YAML, of which JSON is a part) or its parsed JSON form, checked whole:
 * every problem in one 400, each naming its field path (`agents[3].spec.toolset[0]`). An agent's
 * spec is checked by the create rules (CreateAgentDto), a blueprint's body by the blueprint rules.
 */
export function readDocument(input: unknown): FleetDocument {
  let raw = input;
  if (typeof input === 'string') {
    const parsed = parseDocument(input, { uniqueKeys: true, prettyErrors: false });
    if (parsed.errors.length > 0) {
      throw AppError.invalid(parsed.errors.map((e) => ({ path: 'document', message: `not YAML: ${e.message.split('\n')[0]}` })));
    }
    raw = parsed.toJS({ maxAliasCount: 0 });
  }
  const problems: ErrorDetail[] = [];
  if (!isPlain(raw)) throw AppError.invalid([{ path: 'document', message: `a fleet document is a map with apiVersion: ${FLEET_API_VERSION}, kind: ${FLEET_KIND}, agents and blueprints` }]);
  unknownFields(raw, DOCUMENT_FIELDS, '', problems);
  if (raw.apiVersion !== FLEET_API_VERSION) problems.push({ path: 'apiVersion', message: `apiVersion must be ${FLEET_API_VERSION} (what agent-manager export writes)` });
  if (raw.kind !== FLEET_KIND) problems.push({ path: 'kind', message: `kind must be ${FLEET_KIND}` });
  if (raw.prune !== undefined && typeof raw.prune !== 'boolean') problems.push({ path: 'prune', message: 'prune must be true or false' });
  const selection = readSelection(raw.selection, problems);
  const agents = listOf(raw.agents, 'agents', problems).map((entry, i) => readAgent(entry, `agents[${i}]`, problems));
  const blueprints = listOf(raw.blueprints, 'blueprints', problems).map((entry, i) => readBlueprint(entry, `blueprints[${i}]`, problems));
  const doc: FleetDocument = { apiVersion: FLEET_API_VERSION, kind: FLEET_KIND, selection, ...(typeof raw.prune === 'boolean' && { prune: raw.prune }), blueprints, agents };
  if (problems.length === 0) problems.push(...duplicates(doc));
  if (problems.length > 0) throw AppError.invalid(problems, `the fleet document has ${problems.length} problem${problems.length === 1 ? '' : 's'}: ${problems[0].path}: ${problems[0].message}${problems.length > 1 ? ', …' : ''}`);
  return doc;
}

function readSelection(raw: unknown, problems: ErrorDetail[]): FleetSelection {
  if (raw === undefined || raw === null) return {};
  if (!isPlain(raw)) {
    problems.push({ path: 'selection', message: 'selection is a map: namespaces (a list), labels (a map), blueprint (a name)' });
    return {};
  }
  unknownFields(raw, ['namespaces', 'labels', 'blueprint'], 'selection', problems);
  const selection: FleetSelection = {};
  if (raw.namespaces !== undefined) {
    if (!Array.isArray(raw.namespaces) || raw.namespaces.some((n) => typeof n !== 'string' || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n))) {
      problems.push({ path: 'selection.namespaces', message: 'selection.namespaces is a list of namespace names (DNS labels)' });
    } else selection.namespaces = raw.namespaces as string[];
  }
  if (raw.labels !== undefined) {
    if (!isPlain(raw.labels) || Object.values(raw.labels).some((v) => typeof v !== 'string')) problems.push({ path: 'selection.labels', message: 'selection.labels is a map of label keys to values' });
    else selection.labels = raw.labels as Record<string, string>;
  }
  if (raw.blueprint !== undefined) {
    if (typeof raw.blueprint !== 'string' || !BLUEPRINT_NAME.test(raw.blueprint)) problems.push({ path: 'selection.blueprint', message: 'selection.blueprint is a blueprint name' });
    else selection.blueprint = raw.blueprint;
  }
  return selection;
}

function readAgent(raw: unknown, at: string, problems: ErrorDetail[]): FleetAgent {
  if (!isPlain(raw)) {
    problems.push({ path: at, message: `${at} is a map: namespace, name, spec, and optionally version, blueprint, chart` });
    return { namespace: '', name: '', spec: {} };
  }
  unknownFields(raw, AGENT_FIELDS, at, problems);
  if (raw.version !== undefined) version(raw.version, `${at}.version`, problems);
  if (raw.blueprint !== undefined) {
    const b = raw.blueprint;
    if (!isPlain(b) || typeof b.name !== 'string' || !BLUEPRINT_NAME.test(b.name) || !Number.isInteger(b.version) || (b.version as number) < 1) {
      problems.push({ path: `${at}.blueprint`, message: `${at}.blueprint is {name, version}: the blueprint the agent was created from` });
    }
  }
  if (raw.chart !== undefined && (!isPlain(raw.chart) || typeof raw.chart.name !== 'string')) problems.push({ path: `${at}.chart`, message: `${at}.chart is {name, version}` });
  if (!isPlain(raw.spec)) {
    problems.push({ path: `${at}.spec`, message: `${at}.spec is required: the agent's modelConfig, toolset and optional details` });
  } else {
    // The create rules, once: the spec with the agent's namespace and name, as create_agent reads it.
    const { violations } = readInput(CreateAgentDto, { ...raw.spec, namespace: raw.namespace, name: raw.name });
    for (const v of violations) {
      const field = v.path === 'namespace' || v.path === 'name' ? `${at}.${v.path}` : `${at}.spec${v.path ? `.${v.path}` : ''}`;
      problems.push({ path: field, message: v.message });
    }
    for (const field of ['requestId', 'dryRun']) if (field in raw.spec) problems.push({ path: `${at}.spec.${field}`, message: `${field} is not part of an agent's spec: leave it out` });
  }
  return {
    namespace: raw.namespace as string,
    name: raw.name as string,
    ...(raw.version !== undefined && { version: raw.version as number }),
    ...(isPlain(raw.blueprint) && { blueprint: { name: raw.blueprint.name as string, version: raw.blueprint.version as number } }),
    ...(isPlain(raw.chart) && { chart: { name: raw.chart.name as string, version: (raw.chart.version as string | null) ?? null } }),
    spec: isPlain(raw.spec) ? canonicalSpec(raw.spec) : {},
  };
}

function readBlueprint(raw: unknown, at: string, problems: ErrorDetail[]): FleetBlueprint {
  if (!isPlain(raw)) {
    problems.push({ path: at, message: `${at} is a map: name, description, fixed, open, defaults, and optionally version, history` });
    return { name: '', ...canonicalBody({}) };
  }
  unknownFields(raw, BLUEPRINT_FIELDS, at, problems);
  if (typeof raw.name !== 'string' || !BLUEPRINT_NAME.test(raw.name)) problems.push({ path: `${at}.name`, message: `${at}.name must match ${BLUEPRINT_NAME.source}` });
  if (raw.version !== undefined) version(raw.version, `${at}.version`, problems);
  const body = { description: raw.description, fixed: raw.fixed ?? {}, open: raw.open ?? [], defaults: raw.defaults ?? {} };
  for (const p of bodyProblems(body)) problems.push({ path: `${at}.${p.path}`, message: p.message });
  const history = raw.history === undefined ? undefined : listOf(raw.history, `${at}.history`, problems).map((h, j) => {
    const where = `${at}.history[${j}]`;
    if (!isPlain(h)) {
      problems.push({ path: where, message: `${where} is a map: version and the body of that version` });
      return { version: 0, ...canonicalBody({}) };
    }
    unknownFields(h, HISTORY_FIELDS, where, problems);
    version(h.version, `${where}.version`, problems);
    return { version: h.version as number, ...(typeof h.note === 'string' && { note: h.note }), ...canonicalBody(h) };
  });
  return { name: raw.name as string, ...(raw.version !== undefined && { version: raw.version as number }), ...canonicalBody(body), ...(history && { history }) };
}

/** Two entries for one agent or one blueprint: which should win cannot be told. */
function duplicates(doc: FleetDocument): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const agents = new Map<string, number>();
  doc.agents.forEach((a, i) => {
    const key = `${a.namespace}/${a.name}`;
    if (agents.has(key)) problems.push({ path: `agents[${i}]`, message: `agent ${key} is listed twice (also agents[${agents.get(key)}]): keep one` });
    else agents.set(key, i);
  });
  const blueprints = new Map<string, number>();
  doc.blueprints.forEach((b, i) => {
    if (blueprints.has(b.name)) problems.push({ path: `blueprints[${i}]`, message: `blueprint ${b.name} is listed twice (also blueprints[${blueprints.get(b.name)}]): keep one` });
    else blueprints.set(b.name, i);
  });
  return problems;
}

function listOf(raw: unknown, at: string, problems: ErrorDetail[]): unknown[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push({ path: at, message: `${at} is a list` });
    return [];
  }
  return raw;
}

function version(raw: unknown, at: string, problems: ErrorDetail[]): void {
  if (!Number.isInteger(raw) || (raw as number) < 1 || (raw as number) > 2_147_483_647) problems.push({ path: at, message: `${at} is a whole number from 1: the version export recorded` });
}

function unknownFields(raw: Record<string, unknown>, known: string[], at: string, problems: ErrorDetail[]): void {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) problems.push({ path: at ? `${at}.${key}` : key, message: `unknown field "${key}": ${at || 'the document'} takes ${known.join(', ')}` });
  }
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
