/** What the caller declared for an agent (the desired spec kept in the store). */
export interface AgentSpec {
  modelConfig: string;
  toolset: string[];
  description?: string;
  displayName?: string;
  systemMessage?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The exact values written to the Generic agent chart. */
export interface ChartValues {
  modelConfig: string;
  toolset: string[];
  description: string;
  displayName: string;
  systemMessage: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export type OperationKind = 'create' | 'update' | 'delete' | 'rollback';

export const SPEC_FIELDS = ['modelConfig', 'toolset', 'description', 'displayName', 'systemMessage', 'labels', 'annotations'] as const;

export function toChartValues(spec: AgentSpec): ChartValues {
  return {
    modelConfig: spec.modelConfig,
    toolset: [...spec.toolset],
    description: spec.description ?? '',
    displayName: spec.displayName ?? '',
    systemMessage: spec.systemMessage ?? '',
    labels: { ...(spec.labels ?? {}) },
    annotations: { ...(spec.annotations ?? {}) },
  };
}

/** The declared fields behind chart values agent-manager wrote (toChartValues' inverse): empty optional fields were not declared. */
export function specOf(values: ChartValues): AgentSpec {
  const spec: AgentSpec = { modelConfig: values.modelConfig, toolset: [...(values.toolset ?? [])] };
  if (values.description) spec.description = values.description;
  if (values.displayName) spec.displayName = values.displayName;
  if (values.systemMessage) spec.systemMessage = values.systemMessage;
  if (values.labels && Object.keys(values.labels).length > 0) spec.labels = { ...values.labels };
  if (values.annotations && Object.keys(values.annotations).length > 0) spec.annotations = { ...values.annotations };
  return spec;
}

/** A create's declared spec (the DTO's spec fields) and the chart values it writes, in one step. */
export function specAndValues(input: AgentSpec): { spec: AgentSpec; values: ChartValues } {
  const spec = pickSpec(input) as AgentSpec;
  return { spec, values: toChartValues(spec) };
}

/** The spec fields present in a DTO (create, update or validate), nothing else. */
export function pickSpec(input: Partial<AgentSpec>): Partial<AgentSpec> {
  const spec: Partial<AgentSpec> = {};
  for (const field of SPEC_FIELDS) {
    if (input[field] !== undefined) (spec as Record<string, unknown>)[field] = input[field];
  }
  return spec;
}

/** The blueprint an agent was created from, and the version it holds (docs/contract.md §9). */
export interface AgentOrigin {
  blueprint: string;
  version: number;
  /**
   * The blueprint's id when the write started. A write takes seconds of helm; the origin recorded
   * is the blueprint as it stands then: under its new name if it was renamed meanwhile, none if it
   * was deleted (never another blueprint created under the old name).
   */
  blueprintId?: string;
}

/** What a write means to apply, journaled before helm runs. */
export interface OperationIntent {
  spec: AgentSpec;
  values: ChartValues;
  rolledBackTo?: number;
  /** A create or upgrade through a blueprint: recorded with the agent when recovery records the write. */
  origin?: AgentOrigin;
  /**
   * The chart the write installs: a create's (the configured chart, or the bundled one standing in for
   * it) and a rollout's move to another chart; recorded when recovery records the write. Other writes
   * keep the agent's chart.
   */
  chart?: IntentChart;
}

/** A chart as the journal keeps it in an intent. */
export interface IntentChart {
  ref: string;
  version?: string;
  source?: string;
  name?: string;
  chartVersion?: string | null;
}

/** The chart a write uses, as the journal keeps it (only the fields that name it), for recovery to record what a landed write installed. */
export function intentChart(chart: IntentChart): IntentChart {
  const { ref, version, source, name, chartVersion } = chart;
  return { ref, ...(version !== undefined && { version }), ...(source !== undefined && { source }), ...(name !== undefined && { name }), ...(chartVersion !== undefined && { chartVersion }) };
}
