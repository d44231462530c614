import { Injectable } from '@nestjs/common';
import { AppError, type ErrorDetail } from '@app/common';
import { ModelConfigListError, ModelConfigReader, type Condition, type ModelConfigListFailure, type ModelConfigSummary } from '@app/kube';
import type { ModelConfigDto, ModelConfigReadiness } from './model-configs.dto.js';

/**
 * How long a write's check waits for the ModelConfig list: a write holds its agent meanwhile, and
 * a check that cannot be made only costs a warning.
 */
export const MODEL_CONFIG_CHECK_TIMEOUT_MS = 3_000;

/** A Kubernetes object name (DNS-1123 subdomain): what a ModelConfig can be called. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** At most this many names are listed in a refusal; list_model_configs has them all. */
const MAX_NAMES_LISTED = 20;

/** What a write's modelConfig check found: a refusal (the name is missing), a warning (it could not be checked), or neither. */
export interface ModelConfigVerdict {
  violation?: ErrorDetail;
  warning?: ErrorDetail;
}

/** The check as the write runner makes it for a plan naming a modelConfig: warnings to answer with, or a 400. */
export interface ModelConfigGate {
  /** Refuses (400, field modelConfig) a name the namespace has no ModelConfig of; the warnings say what could not be checked. */
  check(namespace: string, modelConfig: string): Promise<ErrorDetail[]>;
}

/** The readiness kagent's conditions give: Ready when it is set, else Accepted (kagent's one ModelConfig condition). */
export function readinessOf(conditions: readonly Condition[]): { readiness: ModelConfigReadiness; reason: string | null } {
  const deciding = conditions.find((c) => c.type === 'Ready') ?? conditions.find((c) => c.type === 'Accepted');
  if (!deciding) return { readiness: 'unknown', reason: null };
  const readiness = deciding.status === 'True' ? 'ready' : deciding.status === 'False' ? 'notReady' : 'unknown';
  return { readiness, reason: deciding.reason ?? null };
}

/** A ModelConfig as answers show it (no Secret, no condition message). */
export function modelConfigView(summary: ModelConfigSummary): ModelConfigDto {
  return { name: summary.name, provider: summary.provider, model: summary.model, ...readinessOf(summary.conditions) };
}

const looseKey = (name: string): string => name.toLowerCase().replace(/[-_.\s]/gu, '');

/** Levenshtein distance (insert, delete, substitute: 1 each). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/** How far `candidate` is from `name`: 0 when they differ only in case and separators, else the edit distance plus one. */
function closeness(name: string, candidate: string): number {
  return looseKey(name) === looseKey(candidate) ? 0 : editDistance(name.toLowerCase(), candidate.toLowerCase()) + 1;
}

/** `names` ordered closest to `name` first (ties by name): the near-miss leads the list a refusal shows. */
export function nearMissFirst(name: string, names: readonly string[]): string[] {
  return [...names].sort((a, b) => closeness(name, a) - closeness(name, b) || a.localeCompare(b));
}

/** The name `name` almost spells: the same but for case and separators, or a few edits away (at most a third of its length, at least 2). */
export function nearMiss(name: string, names: readonly string[]): string | undefined {
  const [closest] = nearMissFirst(name, names);
  if (closest === undefined) return undefined;
  const distance = closeness(name, closest);
  return distance === 0 || distance - 1 <= Math.max(2, Math.floor(name.length / 3)) ? closest : undefined;
}

/** The refusal of a modelConfig the namespace has no ModelConfig of: the near-miss first, then the others. */
export function missingModelConfig(namespace: string, modelConfig: string, names: readonly string[]): ErrorDetail {
  const head = `modelConfig "${modelConfig}" names no ModelConfig in namespace ${namespace}`;
  if (names.length === 0) {
    return { path: 'modelConfig', message: `${head}, which has none: create the kagent ModelConfig there first, or write the agent in the namespace that has it` };
  }
  const close = nearMiss(modelConfig, names);
  const ordered = nearMissFirst(modelConfig, names);
  const listed = ordered.slice(0, MAX_NAMES_LISTED).map((n) => `"${n}"`).join(', ');
  const more = ordered.length > MAX_NAMES_LISTED ? ` and ${ordered.length - MAX_NAMES_LISTED} more (list_model_configs lists them all)` : '';
  const hint = close ? `: did you mean "${close}"? ModelConfigs there` : '; ModelConfigs there';
  return { path: 'modelConfig', message: `${head}${hint}: ${listed}${more}` };
}

const UNCHECKED: Record<ModelConfigListFailure, (namespace: string) => string> = {
  forbidden: (namespace) => `the cluster does not let the caller list ModelConfigs in namespace ${namespace}`,
  no_api: () => 'the cluster serves no kagent ModelConfig API (modelconfigs.kagent.dev/v1alpha2)',
  no_namespace: (namespace) => `namespace ${namespace} does not exist`,
  unreachable: () => 'the cluster could not be read',
};

/** The warning of a check that could not be made, saying why and what is at stake. */
export function uncheckedModelConfig(namespace: string, modelConfig: string, reason: ModelConfigListFailure): ErrorDetail {
  return {
    path: 'modelConfig',
    message:
      `modelConfig "${modelConfig}" was not checked: ${UNCHECKED[reason](namespace)}. ` +
      `kagent runs the agent only if a ModelConfig of that name exists in ${namespace} (list_model_configs shows them)`,
  };
}

/**
 * Checks a write's modelConfig against the ModelConfigs of its namespace (docs/contract.md §3), read as the caller: one
 * list per write, waited for MODEL_CONFIG_CHECK_TIMEOUT_MS at most. A name no object can have is
 * not looked for: its form is refused by the cluster when helm applies the Agent. A name missing from a list
 * that succeeded is refused; a list that could not be made (the caller may not, the API does not
 * exist, the cluster did not answer) lets the write go ahead with a warning.
 */
@Injectable()
export class ModelConfigCheck implements ModelConfigGate {
  /** How long the list is waited for. */
  timeoutMs = MODEL_CONFIG_CHECK_TIMEOUT_MS;

  constructor(private readonly reader: ModelConfigReader) {}

  async verdict(namespace: string, modelConfig: string): Promise<ModelConfigVerdict> {
    // Its form is the cluster's to judge (requests.dto.ts): kagent's Agent CRD refuses it in its own words.
    if (!OBJECT_NAME.test(modelConfig)) return {};
    let items: ModelConfigSummary[];
    try {
      items = await this.reader.list(namespace, this.timeoutMs);
    } catch (error) {
      if (error instanceof ModelConfigListError) return { warning: uncheckedModelConfig(namespace, modelConfig, error.reason) };
      throw error;
    }
    const names = items.map((item) => item.name);
    return names.includes(modelConfig) ? {} : { violation: missingModelConfig(namespace, modelConfig, names) };
  }

  async check(namespace: string, modelConfig: string): Promise<ErrorDetail[]> {
    const { violation, warning } = await this.verdict(namespace, modelConfig);
    // The environment's doing: once the ModelConfig exists the same request succeeds, so no key keeps this answer.
    if (violation) throw new AppError('invalid_request', violation.message, [violation]).fromEnvironment();
    return warning ? [warning] : [];
  }
}
