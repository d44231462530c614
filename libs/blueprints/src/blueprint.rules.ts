import { AgentPatchFieldsDto, CreateAgentDto } from '@app/agents';
import { readInput } from '@app/doors';
import { AppError, append, type ErrorDetail } from '@app/common';
import { TOOLNAMES_REMOVED_MESSAGE } from '@app/toolset';

/*
 * The rules of a blueprint (docs/contract.md §9): a named, versioned bundle of create arguments served as its
 * own MCP tool. Pure functions over plain data; the store, the doors and the registry call them.
 * A blueprint is not a Muster preset (a toolset selector such as preset:read-only).
 */

/** The create arguments a blueprint can fix or leave open, besides name and namespace (always open). */
export const CREATE_ARGUMENTS = ['modelConfig', 'toolset', 'systemMessage', 'description', 'displayName', 'labels', 'annotations'] as const;
export type CreateArgument = (typeof CREATE_ARGUMENTS)[number];

/** Always open: the caller names the agent and picks its namespace. */
export const ALWAYS_OPEN = ['name', 'namespace'] as const;

/** A create needs these; a blueprint must fix each or leave it open. */
const REQUIRED_FOR_CREATE: readonly CreateArgument[] = ['modelConfig', 'toolset'];

/** The tool name grammar (MCP tool names as this service spells them). */
export const BLUEPRINT_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export const BLUEPRINT_DESCRIPTION_MAX = 2000;

/** One version's body: what the versions store, immutably. */
export interface BlueprintBody {
  /** The tool's description. */
  description: string;
  /** Create arguments baked in: never shown by the tool. */
  fixed: Partial<Record<CreateArgument, unknown>>;
  /** Create arguments the caller supplies, besides name and namespace. */
  open: CreateArgument[];
  /** Values for open arguments the caller may leave out (namespace included). */
  defaults: Partial<Record<CreateArgument | 'namespace', unknown>>;
}

type Plain = Record<string, unknown>;

const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value);
const at = (prefix: string, path: string) => (path ? `${prefix}.${path}` : prefix);

/** Why a name cannot be a blueprint's (grammar, or another tool the service serves); [] when it can. */
export function nameProblems(name: unknown, otherTools: Iterable<string>): ErrorDetail[] {
  if (typeof name !== 'string' || !BLUEPRINT_NAME.test(name)) {
    return [{ path: 'name', message: `name must match ${BLUEPRINT_NAME.source}: a lower-case letter, then up to 62 lower-case letters, digits or "_" (it is the MCP tool's name), e.g. incident_helper` }];
  }
  for (const tool of otherTools) {
    if (tool === name) return [{ path: 'name', message: `name "${name}" is the name of a tool agent-manager serves: choose another name for the blueprint's tool` }];
  }
  return [];
}

/**
 * Every problem of a version body, as the create checks see it: the shape, the fixed/open
 * partition (never both; name and namespace always open; modelConfig and toolset fixed or open),
 * the fixed values and the defaults by exactly the rules of create_agent.
 */
export function bodyProblems(raw: unknown): ErrorDetail[] {
  if (!isPlain(raw)) return [{ path: '', message: 'a blueprint body is an object with description, fixed, open and defaults' }];
  const problems: ErrorDetail[] = [];
  if (typeof raw.description !== 'string' || raw.description.trim() === '') {
    problems.push({ path: 'description', message: "description is required: one or two sentences saying what the blueprint's agents are for (it is the tool's description)" });
  } else if (raw.description.length > BLUEPRINT_DESCRIPTION_MAX) {
    problems.push({ path: 'description', message: `description must be at most ${BLUEPRINT_DESCRIPTION_MAX} characters` });
  }
  const fixed = raw.fixed === undefined ? {} : raw.fixed;
  const open = raw.open === undefined ? [] : raw.open;
  const defaults = raw.defaults === undefined ? {} : raw.defaults;
  if (!isPlain(fixed)) problems.push({ path: 'fixed', message: 'fixed must be an object of create arguments, e.g. {"modelConfig": "default-model-config"}' });
  else append(problems, fixedProblems(fixed));
  const openNames = openProblems(open, problems);
  if (isPlain(fixed)) {
    for (const name of openNames) {
      if (name in fixed) problems.push({ path: `open`, message: `${name} is both fixed and open: an argument is one or the other` });
    }
    for (const name of REQUIRED_FOR_CREATE) {
      if (!(name in fixed) && !openNames.includes(name)) problems.push({ path: 'open', message: `${name} is needed by every create: fix it or list it in open` });
    }
  }
  if (!isPlain(defaults)) problems.push({ path: 'defaults', message: 'defaults must be an object of values for open arguments' });
  else append(problems, defaultProblems(defaults, openNames));
  return problems;
}

function fixedProblems(fixed: Plain): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const rest = { ...fixed };
  for (const name of ALWAYS_OPEN) {
    if (name in rest) {
      problems.push({ path: `fixed.${name}`, message: `${name} is always open (every call chooses it): remove it from fixed` });
      delete rest[name];
    }
  }
  return [...problems, ...createRuleProblems('fixed', rest)];
}

/** The create rules (libs/agents' DTO: toolset grammar, toolNames, labels and annotations, sizes, unknown fields). */
function createRuleProblems(prefix: string, args: Plain): ErrorDetail[] {
  const { violations } = readInput(AgentPatchFieldsDto, args);
  return violations.map((v) => ({ path: at(prefix, v.path), message: v.message }));
}

/** The open argument names; their problems pushed. name and namespace may be listed: they are open anyway. */
function openProblems(open: unknown, problems: ErrorDetail[]): CreateArgument[] {
  if (!Array.isArray(open)) {
    problems.push({ path: 'open', message: `open must be a list of argument names, some of ${CREATE_ARGUMENTS.join(', ')}` });
    return [];
  }
  const names: CreateArgument[] = [];
  open.forEach((entry, i) => {
    if ((ALWAYS_OPEN as readonly unknown[]).includes(entry)) return;
    if (!(CREATE_ARGUMENTS as readonly unknown[]).includes(entry)) {
      const shown = typeof entry === 'string' ? `"${entry}"` : 'this entry';
      problems.push({ path: `open[${i}]`, message: `${shown} is not a create argument a blueprint can leave open: use ${CREATE_ARGUMENTS.join(', ')}` });
    } else if (names.includes(entry as CreateArgument)) {
      problems.push({ path: `open[${i}]`, message: `${entry as string} is listed twice: list it once` });
    } else {
      names.push(entry as CreateArgument);
    }
  });
  return names;
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function defaultProblems(defaults: Plain, open: CreateArgument[]): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const rest: Plain = {};
  for (const [key, value] of Object.entries(defaults)) {
    if (key === 'namespace') {
      if (typeof value !== 'string' || value.length > 63 || !NAMESPACE.test(value)) {
        problems.push({ path: 'defaults.namespace', message: 'defaults.namespace must be a DNS-1123 label, at most 63 characters' });
      }
    } else if (key === 'name') {
      problems.push({ path: 'defaults.name', message: 'name has no default: every call names its agent' });
    } else if (!(open as string[]).includes(key)) {
      problems.push({ path: `defaults.${key}`, message: `${key} has a default but is not open: list it in open, or remove the default` });
    } else {
      rest[key] = value;
    }
  }
  return [...problems, ...createRuleProblems('defaults', rest)];
}

/** The body as stored, when it passes every check (`problems` empty): the open list without name and namespace. */
export function normalizeBody(raw: Plain): BlueprintBody {
  const open = (Array.isArray(raw.open) ? raw.open : []).filter((name): name is CreateArgument => (CREATE_ARGUMENTS as readonly unknown[]).includes(name));
  return {
    description: raw.description as string,
    fixed: isPlain(raw.fixed) ? { ...raw.fixed } : {},
    open: CREATE_ARGUMENTS.filter((name) => open.includes(name)),
    defaults: isPlain(raw.defaults) ? { ...raw.defaults } : {},
  };
}

/** A body's problems as the one 400 of a write (the toolNames refusal keeps its text of docs/contract.md §4 as the message). */
export function invalidBody(problems: ErrorDetail[]): AppError {
  const summary = problems.some((p) => p.message === TOOLNAMES_REMOVED_MESSAGE) ? TOOLNAMES_REMOVED_MESSAGE : undefined;
  return AppError.invalid(problems, summary);
}

/** The caller's value wins; objects (labels, annotations) merge per key; lists and scalars replace. */
export function mergeArguments(defaults: Plain, given: Plain): Plain {
  const merged: Plain = { ...defaults };
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const base = merged[key];
    merged[key] = isPlain(base) && isPlain(value) ? { ...base, ...value } : value;
  }
  return merged;
}

/** The arguments a blueprint's tool takes besides the open create arguments. */
const CALL_ARGUMENTS = ['dryRun', 'requestId'] as const;

/** What a blueprint's tool accepts, in the order its schema lists them. */
export function acceptedArguments(body: BlueprintBody): string[] {
  return [...ALWAYS_OPEN, ...body.open, ...CALL_ARGUMENTS];
}

/**
 * The create_agent arguments of one call of a blueprint's tool: the caller's open arguments over
 * the defaults, then the fixed ones. An argument the tool does not take is a violation naming it
 * and what the tool takes: never a fixed value.
 */
export function createArguments(body: BlueprintBody, args: Plain): { input: Plain; violations: ErrorDetail[] } {
  const accepted = acceptedArguments(body);
  const violations: ErrorDetail[] = [];
  const given: Plain = {};
  for (const [key, value] of Object.entries(args)) {
    if (accepted.includes(key)) given[key] = value;
    else violations.push({ path: key, message: `unknown field "${key}": this tool does not take it; it takes ${accepted.join(', ')}` });
  }
  const merged = mergeArguments(body.defaults, given);
  return { input: { ...merged, ...body.fixed }, violations };
}

/**
 * A create's violations as a blueprint's caller may see them: a problem with a fixed argument
 * (possible only after a rule tightened) is named by field, never with its value.
 */
export function redactFixed(body: BlueprintBody, violations: ErrorDetail[]): ErrorDetail[] {
  const fixed = new Set(Object.keys(body.fixed));
  const seen = new Set<string>();
  const out: ErrorDetail[] = [];
  for (const v of violations) {
    const root = v.path.split(/[.[]/)[0];
    if (!fixed.has(root)) {
      out.push(v);
    } else if (!seen.has(root)) {
      seen.add(root);
      out.push({ path: root, message: `the blueprint's fixed ${root} does not pass the create checks: ask the blueprint's owner to save a new version` });
    }
  }
  return out;
}

/** The problems of a create through a blueprint's tool (create_agent's own rules), redacted for its caller. */
export function callProblems(body: BlueprintBody, args: Plain): { input: Plain; violations: ErrorDetail[] } {
  const { input, violations } = createArguments(body, args);
  const checked = readInput(CreateAgentDto, input);
  return { input, violations: [...violations, ...redactFixed(body, checked.violations)] };
}

/**
 * Whether a stored blueprint is conflicted (not served, delete-only), and why: its body no longer
 * passes the create checks, or its name is now another tool's. null when healthy.
 */
export function conflictOf(name: string, storedBody: unknown, otherTools: Iterable<string>): string | null {
  const taken = nameProblems(name, otherTools);
  if (taken.length > 0) return `${taken[0].message}; delete the blueprint and create it again under another name`;
  const problems = bodyProblems(storedBody);
  if (problems.length === 0) return null;
  const listed = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
  return `the active version no longer passes the create checks (${listed}); delete the blueprint and create it again`;
}

/** What clears an optional create argument on an update (modelConfig and toolset are always fixed or open). */
const CLEARED: Partial<Record<CreateArgument, unknown>> = { systemMessage: '', description: '', displayName: '', labels: {}, annotations: {} };

/**
 * The update that moves a holder from version `from` to `to`: the new fixed values; an argument
 * fixed before and neither fixed nor open now is cleared; open arguments keep the agent's values.
 */
export function upgradePatch(from: BlueprintBody | null, to: BlueprintBody): Plain {
  const patch: Plain = { ...to.fixed };
  for (const name of Object.keys(from?.fixed ?? {}) as CreateArgument[]) {
    if (!(name in to.fixed) && !to.open.includes(name) && name in CLEARED) patch[name] = CLEARED[name];
  }
  return patch;
}
