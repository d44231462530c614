import { stringify } from 'yaml';
import type { LiveAgent } from '@app/kube';
import type { AgentSpec } from './agent-spec.js';

/** The annotation the charts write displayName to (charts/agent*, templates/_helpers.tpl). */
export const DISPLAY_NAME_ANNOTATION = 'agent-manager.giantswarm.io/display-name';

/** Labels the charts set themselves (they win over the spec's labels of the same key): not the spec's. */
const CHART_LABELS = new Set([
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/component',
  'helm.sh/chart',
]);

/** Annotations helm and kubectl write on the objects they apply: bookkeeping, never the spec's nor drift. */
const BOOKKEEPING_ANNOTATION = /^(meta\.helm\.sh|kubectl\.kubernetes\.io)\//;

/** An agent's object as a manifest or the API server holds it (the manifest's carries its apiVersion and kind). */
export type AgentObject = LiveAgent & { apiVersion?: string; kind?: string };

/**
 * The spec a live agent object says, read back the way the charts write it: chart 0.x's Agent
 * (`spec.declarative.modelConfig`, `systemMessage`, the toolset in the `X-Muster-Toolset` header)
 * or chart 1.x's AgentTemplate (`spec.modelConfig.name`, `systemPrompt`), `spec.description`, the
 * display name's annotation, and the labels and annotations besides the charts' and helm's own.
 * What the object does not carry (1.x keeps the toolset in the agent's RemoteMCPServer; a 0.x Agent
 * without Muster has no header) is taken from `known`, the revision it is compared with: the diff
 * then shows no change there, rather than a removal nobody made.
 */
export function specOfLive(live: AgentObject, known: AgentSpec | null): AgentSpec {
  const spec = live.spec ?? {};
  const declarative = record(spec.declarative);
  const template = 'modelConfig' in spec || 'systemPrompt' in spec || live.kind === 'AgentTemplate';
  const modelConfig = template ? record(spec.modelConfig).name : declarative.modelConfig;
  const systemMessage = template ? spec.systemPrompt : declarative.systemMessage;
  const toolset = template ? undefined : toolsetHeader(declarative.tools);
  const annotations = { ...(live.metadata?.annotations ?? {}) };
  const displayName = annotations[DISPLAY_NAME_ANNOTATION];
  delete annotations[DISPLAY_NAME_ANNOTATION];
  const read: AgentSpec = {
    modelConfig: typeof modelConfig === 'string' ? modelConfig : '',
    toolset: toolset ?? [...(known?.toolset ?? [])],
  };
  if (typeof spec.description === 'string' && spec.description) read.description = spec.description;
  if (typeof displayName === 'string' && displayName) read.displayName = displayName;
  if (typeof systemMessage === 'string' && systemMessage) read.systemMessage = systemMessage;
  const labels = without(live.metadata?.labels ?? {}, (key) => CHART_LABELS.has(key));
  const kept = without(annotations, (key) => BOOKKEEPING_ANNOTATION.test(key));
  if (Object.keys(labels).length > 0) read.labels = labels;
  if (Object.keys(kept).length > 0) read.annotations = kept;
  return read;
}

/**
 * The two sides of a diff between the object a revision's manifest holds and the live one, as YAML
 * of the fields the chart sets: apiVersion, kind, name, namespace, labels and annotations (without
 * helm's and kubectl's bookkeeping) and the spec, of which the live side keeps only the fields the
 * manifest sets (what the API server or kagent add are not drift, as status says: domain/drift.ts).
 * `null` on a side: no object there (''), as a deleted agent or one never applied.
 */
export function comparableObjects(applied: AgentObject | null, live: AgentObject | null): { applied: string; live: string } {
  const show = (object: AgentObject | null, spec: unknown) => {
    if (!object) return '';
    const metadata = object.metadata ?? ({} as AgentObject['metadata']);
    return stringify({
      apiVersion: applied?.apiVersion ?? object.apiVersion,
      kind: applied?.kind ?? object.kind,
      metadata: {
        name: metadata.name,
        namespace: metadata.namespace,
        labels: sorted(metadata.labels ?? {}),
        annotations: sorted(without(metadata.annotations ?? {}, (key) => BOOKKEEPING_ANNOTATION.test(key))),
      },
      spec,
    }, { sortMapEntries: false });
  };
  return {
    applied: show(applied, applied?.spec),
    live: show(live, applied && live ? onto(applied.spec, live.spec) : live?.spec),
  };
}

/** `live` with only the object keys `applied` has, at every depth (lists and scalars are taken whole). */
function onto(applied: unknown, live: unknown): unknown {
  if (!isRecord(applied) || !isRecord(live)) return live;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(applied)) if (Object.hasOwn(live, key)) kept[key] = onto(applied[key], live[key]);
  return kept;
}

/** The selectors of the `X-Muster-Toolset` header of an Agent's Muster tool; undefined when it has none. */
function toolsetHeader(tools: unknown): string[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const tool of tools) {
    const headers = isRecord(tool) && Array.isArray(tool.headersFrom) ? (tool.headersFrom as unknown[]) : [];
    for (const header of headers) {
      const { name, value } = record(header);
      if (name === 'X-Muster-Toolset' && typeof value === 'string') return value.split(',').filter((s) => s !== '');
    }
  }
  return undefined;
}

function without(map: Record<string, string>, drop: (key: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([key]) => !drop(key)));
}

function sorted(map: Record<string, string>): Record<string, string> | undefined {
  const keys = Object.keys(map).sort();
  return keys.length === 0 ? undefined : Object.fromEntries(keys.map((key) => [key, map[key]]));
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
