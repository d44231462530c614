/**
 * Muster's `toolsetPresets` rules: what `muster serve` checks when it starts (Muster's
 * `internal/toolset/preset.go`, `NewRegistry` and `Registry.Check`), restated so a proposed
 * config can be checked before it reaches Muster. Every message is Muster's own text; where
 * Muster stops at the first error, these answer every error at once. The few problems Muster's
 * YAML decoder refuses before its rules run (a rule that is a string, `readOnly: "yes"`) are
 * said in this project's words, naming the preset and the rule position as Muster's do.
 */
import { parseDocument } from 'yaml';
import { BUILT_IN_PRESETS, PLATFORM_PRESETS, SELECTOR_PATTERN } from './toolset.rules.js';
import { describeValue } from './toolset.format.js';

/** Muster's descriptions of its built-in presets, as `filter_tools` with `include_presets` shows them. */
export const BUILT_IN_PRESET_DESCRIPTIONS: Readonly<Record<(typeof BUILT_IN_PRESETS)[number], string>> = {
  'read-only': 'Every tool its server annotates read-only, plus every workflow whose step tools are all read-only',
  none: 'No tools',
  full: "The whole catalogue, including muster's core tools",
};

/** What an installation may have without Muster knowing it (agent-platform's values): shown when no source is configured. */
export const PLATFORM_PRESET_DESCRIPTION =
  "Shipped by the fleet meta-package agent-platform (3.11.0 and later) in Muster's toolsetPresets, selecting servers by their tool-group label";

/** The keys of one rule, in Muster's order (its `ruleKeys`, named in the "exactly one" error). */
export const PRESET_RULE_KEYS = ['tool', 'pattern', 'server', 'workflow', 'readOnly', 'preset', 'label'] as const;

/** Where a preset's name may come from: Muster itself, agent-platform's values, or the configured source. */
export type PresetOrigin = 'muster' | 'platform' | 'configured';

export interface PresetInfo {
  name: string;
  description: string | null;
  source: PresetOrigin;
}

/** A configured preset that passed: its name and description (its rules matter to Muster only). */
export interface ConfiguredPreset {
  name: string;
  description: string | null;
}

export interface PresetsCheck {
  /** Every error, in Muster's words; none: Muster would start with these presets. */
  errors: string[];
  /** The configured presets, sorted by name (as Muster lists them after its built-ins); built-in redefinitions left out. */
  presets: ConfiguredPreset[];
}

// Muster's presetNamePattern and labelPattern.
const PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/u;
const LABEL_RULE = /^[A-Za-z0-9][A-Za-z0-9._/-]*(=[A-Za-z0-9._-]*)?$/u;
// Go's path.ErrBadPattern.
const BAD_PATTERN = 'syntax error in pattern';
const BUILT_IN: ReadonlySet<string> = new Set(BUILT_IN_PRESETS);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Go's `%q` of a string: double-quoted, with Go's escapes for control characters. */
export function goQuote(text: string): string {
  return JSON.stringify(text).replace(/\\u00([01][0-9a-f]|7f)/gu, '\\x$1').replace(/\\x0b/gu, '\\v').replace(/\\x07/gu, '\\a');
}

/**
 * The problem of a glob Muster would refuse, as Go's `filepath.Match` finds it (on Unix): an
 * unclosed or empty `[...]` class, a range missing an end, a trailing `\`. Undefined when it compiles.
 */
export function globProblem(pattern: string): string | undefined {
  const chars = [...pattern];
  let at = 0;
  // Go's getEsc: one class character, `\` escaping the next; the class must go on after it.
  const classChar = (): boolean => {
    const c = chars[at];
    if (c === undefined || c === '-' || c === ']') return false;
    at += c === '\\' ? 2 : 1;
    return chars[at - 1] !== undefined && at < chars.length;
  };
  while (at < chars.length) {
    const c = chars[at];
    if (c === '\\') {
      if (at + 1 >= chars.length) return BAD_PATTERN;
      at += 2;
    } else if (c === '[') {
      at += 1;
      if (chars[at] === '^') at += 1;
      for (let ranges = 0; ; ranges += 1) {
        if (chars[at] === ']' && ranges > 0) {
          at += 1;
          break;
        }
        if (!classChar()) return BAD_PATTERN;
        if (chars[at] === '-') {
          at += 1;
          if (!classChar()) return BAD_PATTERN;
        }
      }
    } else {
      at += 1;
    }
  }
  return undefined;
}

/** A string-valued rule key as Muster's decoder reads it: YAML scalars become their text; null and "" are unset. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function ruleProblems(preset: string, list: 'include' | 'exclude', rules: unknown, errors: string[]): string[] {
  const composed: string[] = [];
  if (rules === undefined || rules === null) return composed;
  if (!Array.isArray(rules)) {
    errors.push(`toolsetPresets: preset ${goQuote(preset)} ${list} must be a list of rules, e.g. [{server: <name>}], not ${describeValue(rules)}`);
    return composed;
  }
  rules.forEach((rule: unknown, index) => {
    const at = `toolsetPresets: preset ${goQuote(preset)} ${list}[${index}]`;
    if (rule !== null && !isRecord(rule)) {
      errors.push(`${at} must be a map with one key, e.g. {tool: <name>}, not ${describeValue(rule)}`);
      return;
    }
    const fields = rule ?? {};
    const set = PRESET_RULE_KEYS.filter((key) => (key === 'readOnly' ? fields.readOnly !== undefined && fields.readOnly !== null : scalarText(fields[key]) !== undefined));
    const wrongType = PRESET_RULE_KEYS.find((key) => {
      const value = fields[key];
      if (value === undefined || value === null) return false;
      return key === 'readOnly' ? typeof value !== 'boolean' : !['string', 'number', 'boolean'].includes(typeof value);
    });
    if (wrongType !== undefined) {
      errors.push(`${at} ${wrongType} must be ${wrongType === 'readOnly' ? 'true' : 'a string'}, not ${describeValue(fields[wrongType])}`);
      return;
    }
    if (set.length !== 1) {
      errors.push(`${at} must set exactly one of ${PRESET_RULE_KEYS.join(', ')}`);
      return;
    }
    const [key] = set;
    const value = key === 'readOnly' ? fields.readOnly : scalarText(fields[key])!;
    if (key === 'pattern') {
      const problem = globProblem(value as string);
      if (problem !== undefined) errors.push(`${at} pattern ${goQuote(value as string)} is invalid: ${problem}`);
    } else if (key === 'readOnly' && value === false) {
      errors.push(`${at} readOnly: false selects nothing; omit the rule`);
    } else if (key === 'preset' && list === 'exclude') {
      errors.push(`${at} cannot compose a preset in ${list}; only include may`);
    } else if (key === 'label' && !LABEL_RULE.test(value as string)) {
      errors.push(`${at} label ${goQuote(value as string)} is invalid; expected <key>=<value> or <key>`);
    } else if (key === 'preset') {
      composed.push(value as string);
    }
  });
  return composed;
}

/**
 * Checks a `toolsetPresets:` block by Muster's start-up rules and answers every error at once.
 * Presets are checked in name order as Muster does; a redefined built-in is reported alone (its
 * rules would never be read). Composition is then followed from each preset: an unknown preset is
 * reported once per preset that includes it, and a cycle once, from the first preset (by name) on it.
 */
export function checkPresets(toolsetPresets: unknown): PresetsCheck {
  const errors: string[] = [];
  if (toolsetPresets === undefined || toolsetPresets === null) return { errors, presets: [] };
  if (!isRecord(toolsetPresets)) {
    return { errors: [`toolsetPresets must be a map of preset names to presets, not ${describeValue(toolsetPresets)}`], presets: [] };
  }
  const names = Object.keys(toolsetPresets).sort();
  const configured: ConfiguredPreset[] = [];
  const includes = new Map<string, string[]>();
  for (const name of names) {
    if (BUILT_IN.has(name)) {
      errors.push(`toolsetPresets: preset ${goQuote(name)} is built in and cannot be redefined`);
      continue;
    }
    if (!PRESET_NAME.test(name)) {
      errors.push(`toolsetPresets: preset name ${goQuote(name)} is invalid; use letters, digits, '.', '_' or '-'`);
    }
    const preset = toolsetPresets[name] ?? {};
    if (!isRecord(preset)) {
      errors.push(`toolsetPresets: preset ${goQuote(name)} must be a map with description, include and exclude, not ${describeValue(preset)}`);
      configured.push({ name, description: null });
      includes.set(name, []);
      continue;
    }
    const description = scalarText(preset.description) ?? null;
    if (typeof preset.description === 'object' && preset.description !== null) {
      errors.push(`toolsetPresets: preset ${goQuote(name)} description must be a string, not ${describeValue(preset.description)}`);
    }
    includes.set(name, ruleProblems(name, 'include', preset.include, errors));
    ruleProblems(name, 'exclude', preset.exclude, errors);
    configured.push({ name, description });
  }
  compositionProblems(includes, configured, errors);
  return { errors, presets: configured };
}

/** Muster's checkComposition, from every configured preset, every error once. */
function compositionProblems(includes: ReadonlyMap<string, string[]>, configured: readonly ConfiguredPreset[], errors: string[]): void {
  const known = [...BUILT_IN_PRESETS, ...configured.map((preset) => preset.name)];
  const seen = new Set<string>();
  const say = (key: string, message: string): void => {
    if (seen.has(key)) return;
    seen.add(key);
    errors.push(message);
  };
  const visit = (name: string, path: string[]): void => {
    const earlier = path.indexOf(name);
    if (earlier !== -1) {
      const cycle = path.slice(earlier);
      say(`cycle:${[...cycle].sort().join('\n')}`, `toolsetPresets: preset composition cycles: ${path.join(' -> ')} -> ${name}`);
      return;
    }
    const next = [...path, name];
    if (!BUILT_IN.has(name) && !includes.has(name)) {
      const includer = path.at(-1)!;
      say(`unknown:${includer}\n${name}`, `toolsetPresets: preset ${goQuote(includer)} includes unknown preset ${goQuote(name)}; known presets: ${known.join(', ')}`);
      return;
    }
    for (const included of includes.get(name) ?? []) visit(included, next);
  };
  for (const { name } of configured) visit(name, []);
}

/** The config.yaml text Muster reads, parsed: its `toolsetPresets:` block, or the YAML's own error. */
export function readMusterConfig(text: string): { toolsetPresets?: unknown; error?: string } {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    return { error: `the config is not valid YAML: ${document.errors.map((error) => error.message).join('; ')}` };
  }
  const root: unknown = document.toJS({ maxAliasCount: 100 });
  if (root === null || root === undefined) return {};
  if (!isRecord(root)) return { error: `the config must be a map with toolsetPresets: at its top, not ${describeValue(root)}` };
  return { toolsetPresets: root.toolsetPresets };
}

/** Checks a whole config.yaml text: a YAML error is the one error, else every preset error. */
export function checkMusterConfig(text: string): PresetsCheck {
  const { toolsetPresets, error } = readMusterConfig(text);
  return error === undefined ? checkPresets(toolsetPresets) : { errors: [error], presets: [] };
}

/** The presets a toolset may name: Muster's built-ins first, then the configured ones (or, with none configured, agent-platform's). */
export function knownPresets(configured: readonly ConfiguredPreset[] | undefined): PresetInfo[] {
  const builtIns = BUILT_IN_PRESETS.map((name): PresetInfo => ({ name, description: BUILT_IN_PRESET_DESCRIPTIONS[name], source: 'muster' }));
  if (configured === undefined) {
    return [...builtIns, ...PLATFORM_PRESETS.map((name): PresetInfo => ({ name, description: PLATFORM_PRESET_DESCRIPTION, source: 'platform' }))];
  }
  return [...builtIns, ...configured.map((preset): PresetInfo => ({ ...preset, source: 'configured' }))];
}

const looseKey = (name: string): string => name.toLowerCase().replace(/[-_.\s]/gu, '');

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}

/**
 * The known preset a name almost spells: the same but for case, `-`, `_`, `.` and spaces
 * (`read_only`, `ReadOnly`), else one at most two edits away (`infrastucture`); undefined when
 * the name is known itself or resembles none.
 */
export function presetNearMiss(name: string, known: readonly string[]): string | undefined {
  if (known.includes(name)) return undefined;
  const key = looseKey(name);
  const loose = known.find((preset) => looseKey(preset) === key);
  if (loose !== undefined || name.length < 4) return loose;
  let best: { preset: string; distance: number } | undefined;
  for (const preset of known) {
    const distance = editDistance(key, looseKey(preset));
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { preset, distance };
  }
  return best?.preset;
}

export interface UnknownPreset {
  path: string;
  index: number;
  selector: string;
  message: string;
}

/**
 * Muster's `Registry.Check` for every preset a toolset names that `known` lacks: Muster's message
 * (`toolset [<selectors as given>] names unknown preset "x"; known presets: …`, the order Muster
 * lists them in) and, when a known name is close, which one was probably meant.
 */
export function unknownPresets(toolset: readonly string[], known: readonly string[], field = 'toolset'): UnknownPreset[] {
  const found: UnknownPreset[] = [];
  toolset.forEach((selector, index) => {
    if (!SELECTOR_PATTERN.test(selector) || !selector.startsWith('preset:')) return;
    const name = selector.slice('preset:'.length);
    if (known.includes(name)) return;
    const near = presetNearMiss(name, known);
    found.push({
      path: `${field}[${index}]`,
      index,
      selector,
      message:
        `toolset [${toolset.join(',')}] names unknown preset ${goQuote(name)}; known presets: ${known.join(', ')}` +
        (near === undefined ? '' : `; did you mean "preset:${near}"? Preset names are exact`),
    });
  });
  return found;
}
