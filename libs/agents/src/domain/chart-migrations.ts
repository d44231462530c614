/**
 * Value migrations between majors of the Generic agent chart (docs/contract.md §5).
 *
 * Chart 0.x (charts/agent) renders a `kagent.dev/v1alpha2` `Agent` bound to the shared Muster
 * RemoteMCPServer; chart 1.x (charts/agent-v1) renders a `kagent.dev/v1alpha3` `AgentTemplate` and
 * the agent's own RemoteMCPServer (`<name>-muster`), which carries the toolset as `X-Muster-Toolset`
 * because v1alpha3 binds no headers on the template. The values agent-manager writes keep their
 * names and meaning; what moves is the Muster binding.
 *
 * This module is the source of truth for the migration: the chart's Chart.yaml annotations only
 * name it. It is pure: what it needs from the cluster (the shared RemoteMCPServer's spec) the caller
 * reads and passes as context. Every 0.x field is answered: carried (to where, rendering what) or
 * not carried (why), never dropped silently; 1.x values the 0.x values cannot supply are `missing`.
 */

/** A 0.x field as it reaches 1.x: the 1.x value it became (null: none needed) and what it renders. */
export interface CarriedValue {
  field: string;
  to: string | null;
  renders: string;
  note?: string;
}

/** A 0.x field (or part of one) that 1.x cannot express, and why. */
export interface NotCarriedValue {
  field: string;
  reason: string;
}

/** A 1.x value the 0.x values do not supply, and how to supply it. */
export interface MissingValue {
  field: string;
  reason: string;
}

export interface ValuesMigration {
  values: Record<string, unknown>;
  carried: CarriedValue[];
  notCarried: NotCarriedValue[];
  missing: MissingValue[];
}

/** A kagent ValueRef: a header with a literal value or one from a ConfigMap or Secret key. */
export interface HeaderRef {
  name: string;
  value?: string;
  valueFrom?: { type: string; name: string; key: string };
}

/**
 * The spec of the shared RemoteMCPServer a 0.x Agent bound (`muster.name`, default `muster`, in the
 * agent's namespace), as the caller read it from the cluster. The agent's own 1.x server copies it.
 */
export interface SharedMusterServer {
  url: string;
  protocol?: string;
  timeout?: string;
  headersFrom?: HeaderRef[];
}

export interface MigrationContext {
  musterServer?: SharedMusterServer | null;
}

/** The migrations the chart majors declare: from → to. */
export const CHART_MIGRATIONS = [{ from: '0', to: '1' }] as const;

export type ChartMigration = (typeof CHART_MIGRATIONS)[number];

/** The major of a chart version ("0.6.0" → "0", "1.0.0-rc.1" → "1"). */
export function chartMajor(version: string): string {
  return version.replace(/^v/, '').split('.')[0] ?? '';
}

/**
 * The values of chart major `to` that mean what `values` meant under major `from`, with a row per
 * 0.x field saying where it went or why it could not go. Throws for a pair no chart declares.
 */
export function migrateValues(from: '0', to: '1', values: Record<string, unknown>, context: MigrationContext = {}): ValuesMigration {
  if (from !== '0' || to !== '1') {
    throw new Error(`no values migration from chart major ${String(from)} to ${String(to)}: declared are ${CHART_MIGRATIONS.map((m) => `${m.from} → ${m.to}`).join(', ')}`);
  }
  return migrate0to1(values, context);
}

/** Muster's meta-tools: the 1.x chart's default muster.toolNames (the same as 0.x's). */
export const MUSTER_META_TOOLS = ['list_tools', 'filter_tools', 'describe_tool', 'call_tool', 'list_core_tools', 'list_resources', 'get_resource', 'list_prompts', 'get_prompt'];

/** kagent v1alpha3 MCPToolBinding.tools: 1 to 50 distinct names. */
const MAX_BINDING_TOOLS = 50;
const TOOLSET_HEADER = 'x-muster-toolset';
const PROTOCOLS = ['STREAMABLE_HTTP', 'SSE'];

/** The 0.x top-level values whose name and meaning 1.x keeps, and what each renders there. */
const SAME_MEANING: Record<string, string> = {
  description: 'AgentTemplate spec.description (0.x: Agent spec.description)',
  displayName: 'annotation agent-manager.giantswarm.io/display-name on the AgentTemplate and the RemoteMCPServer (0.x: on the Agent)',
  systemMessage: 'AgentTemplate spec.systemPrompt (0.x: Agent spec.declarative.systemMessage)',
  modelConfig: 'AgentTemplate spec.modelConfig.name (0.x: Agent spec.declarative.modelConfig)',
  labels: 'labels of the AgentTemplate and the RemoteMCPServer (0.x: of the Agent)',
  annotations: 'annotations of the AgentTemplate and the RemoteMCPServer (0.x: of the Agent)',
  toolset: "X-Muster-Toolset header of the agent's own RemoteMCPServer <name>-muster (0.x: headersFrom of the Agent's Muster tool entry)",
};

const MUSTER_FIELDS = ['enabled', 'name', 'kind', 'apiGroup', 'toolNames'];

function migrate0to1(values: Record<string, unknown>, context: MigrationContext): ValuesMigration {
  const result: ValuesMigration = { values: {}, carried: [], notCarried: [], missing: [] };
  for (const [field, value] of Object.entries(values)) {
    if (field === 'muster') continue;
    const renders = SAME_MEANING[field];
    if (renders === undefined) {
      result.notCarried.push({ field, reason: `not a value of the Generic agent chart 0.x (known: ${[...Object.keys(SAME_MEANING), 'muster'].join(', ')}); 1.x has no such value` });
      continue;
    }
    result.values[field] = structuredClone(value);
    result.carried.push({ field, to: field, renders });
  }
  migrateMuster(values, context, result);
  return result;
}

/**
 * 0.x bound a shared RemoteMCPServer by reference (muster.kind/apiGroup/name) with the toolset as a
 * header of the Agent's tool entry; 1.x renders the agent's own RemoteMCPServer, so it needs the
 * shared server's URL (and headers) as values, and binds kind RemoteMCPServer only.
 */
function migrateMuster(values: Record<string, unknown>, context: MigrationContext, result: ValuesMigration): void {
  const given = isRecord(values.muster) ? values.muster : {};
  if (values.muster !== undefined && !isRecord(values.muster)) {
    result.notCarried.push({ field: 'muster', reason: 'not an object, as chart 0.x requires: nothing of it can be read' });
  }
  const muster: Record<string, unknown> = {};
  for (const field of Object.keys(given)) {
    if (!MUSTER_FIELDS.includes(field)) result.notCarried.push({ field: `muster.${field}`, reason: `not a value of the Generic agent chart 0.x (known: ${MUSTER_FIELDS.map((f) => `muster.${f}`).join(', ')})` });
  }
  const name = typeof given.name === 'string' && given.name !== '' ? given.name : 'muster';
  const kind = typeof given.kind === 'string' ? given.kind : 'RemoteMCPServer';
  const apiGroup = typeof given.apiGroup === 'string' ? given.apiGroup : 'kagent.dev';
  const bindable = kind === 'RemoteMCPServer' && (apiGroup === 'kagent.dev' || apiGroup === '');
  const enabled = given.enabled === undefined ? true : given.enabled === true;
  const binds = enabled && !isChatOnly(values.toolset);

  if (given.enabled !== undefined) {
    if (binds && !bindable) {
      result.notCarried.push({ field: 'muster.enabled', reason: `the 0.x binding to ${kind} "${name}" cannot be rendered by v1alpha3 (see muster.kind / muster.apiGroup): 1.x renders muster.enabled=false` });
    } else {
      muster.enabled = enabled;
      result.carried.push({ field: 'muster.enabled', to: 'muster.enabled', renders: "whether the AgentTemplate binds the agent's own Muster RemoteMCPServer (0.x: whether the Agent has the Muster tool entry)" });
    }
  }
  if (binds && !bindable) muster.enabled = false;

  if (given.kind !== undefined) {
    if (kind === 'RemoteMCPServer') result.carried.push({ field: 'muster.kind', to: null, renders: 'AgentTemplate spec.tools[0].mcp.server.kind: RemoteMCPServer, fixed in 1.x' });
    else result.notCarried.push({ field: 'muster.kind', reason: `kagent v1alpha3 binds MCP servers of kind RemoteMCPServer only (AgentTemplate spec.tools[].mcp.server.kind), not ${kind}: the agent loses this binding` });
  }
  if (given.apiGroup !== undefined) {
    if (apiGroup === 'kagent.dev' || apiGroup === '') result.carried.push({ field: 'muster.apiGroup', to: null, renders: 'nothing: v1alpha3 server references carry no API group (kagent.dev is implied)' });
    else result.notCarried.push({ field: 'muster.apiGroup', reason: `kagent v1alpha3 server references carry no API group and mean kagent.dev, not ${apiGroup}: the agent loses this binding` });
  }

  if (given.toolNames !== undefined) migrateToolNames(given.toolNames, muster, result);

  if (binds && bindable) {
    copySharedServer(name, given.name !== undefined, context.musterServer, muster, result);
  } else if (given.name !== undefined) {
    result.carried.push({ field: 'muster.name', to: null, renders: 'nothing: the agent binds no Muster server (chat-only toolset or muster disabled), in 1.x as in 0.x' });
  }

  if (Object.keys(muster).length > 0) result.values.muster = muster;
}

/** v1alpha3 wants 1 to 50 distinct names where v1alpha2 took 0 to 50 with repeats. */
function migrateToolNames(toolNames: unknown, muster: Record<string, unknown>, result: ValuesMigration): void {
  if (!Array.isArray(toolNames) || toolNames.some((name) => typeof name !== 'string' || name === '')) {
    result.notCarried.push({ field: 'muster.toolNames', reason: "not a list of non-empty names: 1.x keeps the chart's default (Muster's meta-tools)" });
    return;
  }
  const renders = "AgentTemplate spec.tools[0].mcp.tools (0.x: the Agent's mcpServer.toolNames); kagent applies them to Muster's meta-tools only";
  if (toolNames.length === 0) {
    muster.toolNames = [...MUSTER_META_TOOLS];
    result.carried.push({ field: 'muster.toolNames', to: 'muster.toolNames', renders, note: "0.x's empty list bound every tool the server offers; v1alpha3 needs at least one name: Muster's meta-tools are named instead" });
    return;
  }
  const distinct = [...new Set(toolNames as string[])];
  muster.toolNames = distinct.slice(0, MAX_BINDING_TOOLS);
  const note = distinct.length < toolNames.length ? 'repeated names are bound once (v1alpha3 keeps them as a set)' : undefined;
  result.carried.push({ field: 'muster.toolNames', to: 'muster.toolNames', renders, ...(note ? { note } : {}) });
  if (distinct.length > MAX_BINDING_TOOLS) {
    result.notCarried.push({ field: 'muster.toolNames', reason: `kagent v1alpha3 binds at most ${MAX_BINDING_TOOLS} tools per MCP server; not carried: ${distinct.slice(MAX_BINDING_TOOLS).join(', ')}` });
  }
}

/** The agent's own RemoteMCPServer takes the shared one's url, protocol, timeout and headers. */
function copySharedServer(name: string, nameGiven: boolean, shared: SharedMusterServer | null | undefined, muster: Record<string, unknown>, result: ValuesMigration): void {
  const field = nameGiven ? 'muster.name' : 'muster.name (default "muster")';
  if (!shared || typeof shared.url !== 'string' || shared.url === '') {
    result.missing.push({
      field: 'muster.url',
      reason: `1.x renders the agent's own RemoteMCPServer, which needs Muster's URL; the 0.x values only name the shared RemoteMCPServer "${name}": read its spec and pass it as context.musterServer`,
    });
    if (nameGiven) result.notCarried.push({ field: 'muster.name', reason: `the shared RemoteMCPServer "${name}" is no longer bound and its spec was not given: set muster.url` });
    return;
  }
  muster.url = shared.url;
  if (shared.protocol !== undefined) {
    if (PROTOCOLS.includes(shared.protocol)) muster.protocol = shared.protocol;
    else result.notCarried.push({ field: `RemoteMCPServer ${name} spec.protocol`, reason: `kagent takes ${PROTOCOLS.join(' or ')}, not ${shared.protocol}: the chart's default STREAMABLE_HTTP is rendered` });
  }
  if (shared.timeout) muster.timeout = shared.timeout;
  const headers: HeaderRef[] = [];
  (shared.headersFrom ?? []).forEach((header, index) => {
    if (header.name.toLowerCase() === TOOLSET_HEADER) {
      result.notCarried.push({ field: `RemoteMCPServer ${name} spec.headersFrom[${index}]`, reason: "sets X-Muster-Toolset, which 1.x sends from the agent's toolset value: the agent's toolset is the one sent" });
    } else {
      headers.push(structuredClone(header));
    }
  });
  if (headers.length > 0) muster.headersFrom = headers;
  result.carried.push({
    field,
    to: ['muster.url', ...(muster.protocol ? ['muster.protocol'] : []), ...(muster.timeout ? ['muster.timeout'] : []), ...(headers.length ? ['muster.headersFrom'] : [])].join(', '),
    renders: `spec of the agent's own RemoteMCPServer <name>-muster, copied from the shared RemoteMCPServer "${name}" the 0.x Agent bound (no longer bound in 1.x)`,
  });
}

/** Exactly ["preset:none"]: the chat-only agent, which binds no Muster server in either major. */
function isChatOnly(toolset: unknown): boolean {
  return Array.isArray(toolset) && toolset.length === 1 && toolset[0] === 'preset:none';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
