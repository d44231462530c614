import { describeToolset, describeValue, quoteAll } from './toolset.format.js';
import {
  isSelectorKind,
  INVISIBLE_CHARACTER,
  isShippedPreset,
  MAX_INLINE_SELECTORS,
  MAX_SELECTOR_LENGTH,
  MAX_TOOLSET_HEADER_BYTES,
  PRESET_ONLY_PREFIX,
  RESERVED_PREFIX,
  SELECTOR_PATTERN,
  shippedPresetNearMiss,
} from './toolset.rules.js';

export interface ToolsetViolation {
  /** `toolset` for the list as a whole, `toolset[3]` for one item. */
  path: string;
  message: string;
  index?: number;
  selector?: string;
}

export interface ValidateToolsetOptions {
  /** The name the paths start with; `toolset` unless the list sits elsewhere. */
  field?: string;
  /** When true (the default), an absent (undefined or null) toolset is a violation. */
  required?: boolean;
}

const FORMS = 'preset:<name>, server:<name>, workflow:<name> or tool:<name>';

const REQUIRED_MESSAGE =
  'toolset is required: declare the tools this agent may use, e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent';

const EMPTY_LIST_MESSAGE =
  'the list is empty; declare at least one selector, e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent ' +
  '(an empty list is refused so that "no tools" is never confused with implicit full access)';

/**
 * Checks a toolset against the inline grammar and returns every violation at once (none means
 * valid). It never resolves, reorders, deduplicates or rewrites the list: hints only suggest.
 */
export function validateToolset(value: unknown, options: ValidateToolsetOptions = {}): ToolsetViolation[] {
  const field = options.field ?? 'toolset';
  const required = options.required ?? true;

  if (value === undefined || value === null) {
    return required ? [{ path: field, message: REQUIRED_MESSAGE }] : [];
  }
  if (!Array.isArray(value)) {
    return [{ path: field, message: `toolset ${describeValue(value)}: ${notAListProblem(value)}` }];
  }

  const heading = `toolset ${describeToolset(value)}: `;
  const violations: ToolsetViolation[] = [];
  if (value.length === 0) {
    violations.push({ path: field, message: heading + EMPTY_LIST_MESSAGE });
  }
  // Past the cap nothing more is read: a list of 100,000 items costs what a list of 33 does.
  const checked = Math.min(value.length, MAX_INLINE_SELECTORS);
  if (value.length > MAX_INLINE_SELECTORS) {
    violations.push({
      path: `${field}[${MAX_INLINE_SELECTORS}]`,
      index: MAX_INLINE_SELECTORS,
      message:
        `${heading}${value.length} selectors exceed the cap of ${MAX_INLINE_SELECTORS} inline selectors ` +
        `(the selector at index ${MAX_INLINE_SELECTORS} is one too many; those after it were not checked); ` +
        `define a preset in Muster's toolsetPresets for a larger selection and select it with "preset:<name>"`,
    });
  }
  // An index loop rather than forEach, so that holes in a sparse array are reported too.
  for (let index = 0; index < checked; index += 1) {
    const violation = itemViolation(value[index], index, field, heading);
    if (violation !== undefined) {
      violations.push(violation);
    }
  }
  const header = headerProblem(value, checked);
  if (header !== undefined) {
    violations.push({ path: field, message: heading + header });
  }
  return violations;
}

function itemViolation(item: unknown, index: number, field: string, heading: string): ToolsetViolation | undefined {
  const path = `${field}[${index}]`;
  if (typeof item !== 'string') {
    return {
      path,
      index,
      message:
        `${heading}item ${describeValue(item)} at index ${index} is ${kindOf(item)}, not a selector string; ` +
        `write each selector as a string, e.g. "preset:read-only"`,
    };
  }
  const problem = selectorProblem(item);
  return problem === undefined
    ? undefined
    : { path, index, selector: item, message: `${heading}selector ${describeValue(item)} at index ${index} ${problem}` };
}

/** The X-Muster-Toolset header the chart renders (the selectors joined by commas) past its cap, or undefined. */
function headerProblem(list: readonly unknown[], checked: number): string | undefined {
  let bytes = Math.max(checked - 1, 0);
  for (let index = 0; index < checked; index += 1) {
    const item = list[index];
    bytes += typeof item === 'string' ? utf8Length(item) : 0;
  }
  if (bytes <= MAX_TOOLSET_HEADER_BYTES) {
    return undefined;
  }
  return (
    `the selectors joined take ${bytes} bytes (UTF-8), more than the ${MAX_TOOLSET_HEADER_BYTES} bytes (4 KiB) of the X-Muster-Toolset header; ` +
    `define a preset in Muster's toolsetPresets for a larger selection and select it with "preset:<name>"`
  );
}

function kindOf(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'a list';
  }
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

function notAListProblem(value: unknown): string {
  if (typeof value === 'string') {
    const selectors = splitSelectors(value);
    if (selectors.length > 0) {
      return `must be a list of selectors, not a string; did you mean ${describeToolset(selectors)}?`;
    }
  }
  return `must be a list of selectors, not ${kindOf(value)}; e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent`;
}

/**
 * The parts of a comma-separated selector string, trimmed, each invalid one fixed where the fix is obvious.
 * A part without a prefix takes the previous part's (`tool:a,b` → `tool:a`, `tool:b`).
 */
function splitSelectors(text: string): string[] {
  const parts: string[] = [];
  let prefix: string | undefined;
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') {
      continue;
    }
    const colon = part.indexOf(':');
    const withPrefix = colon === -1 && prefix !== undefined ? `${prefix}:${part}` : part;
    const fixed = SELECTOR_PATTERN.test(withPrefix) ? withPrefix : (diagnose(withPrefix).suggestion ?? withPrefix);
    const fixedColon = fixed.indexOf(':');
    prefix = fixedColon === -1 ? prefix : fixed.slice(0, fixedColon);
    parts.push(fixed);
  }
  return parts;
}

/** What is wrong with one selector string, phrased to follow `selector "x" at index 3 `. */
function selectorProblem(selector: string): string | undefined {
  const length = codePointCount(selector);
  if (length > MAX_SELECTOR_LENGTH) {
    return (
      `has ${length} characters, more than the ${MAX_SELECTOR_LENGTH} a selector may have; ` +
      `write the exact Muster name, or define a preset in Muster's toolsetPresets and select it with "preset:<name>"`
    );
  }
  const invisible = invisibleProblem(selector);
  if (invisible !== undefined) {
    return invisible;
  }
  if (SELECTOR_PATTERN.test(selector)) {
    return undefined;
  }
  if (selector.trim() === '') {
    return `is empty; remove it: each item is one selector, such as "preset:read-only"`;
  }
  if (selector.includes(',')) {
    const parts = splitSelectors(selector);
    return parts.length > 1
      ? `holds ${parts.length} selectors; put one selector per list item: ${quoteAll(parts)}`
      : `contains a comma, which separates selectors; remove it${parts.length === 1 ? `: did you mean ${quoteAll(parts)}?` : ''}`;
  }
  const { faults, advice, suggestion } = diagnose(selector);
  const what = faults.join(' and ');
  if (suggestion === undefined) {
    return `${what}; ${advice.join('; ')}`;
  }
  const [first = '', ...rest] = advice;
  const sentence = [first.charAt(0).toUpperCase() + first.slice(1), ...rest].join('; ');
  return `${what}; did you mean ${describeValue(suggestion)}? ${sentence}`;
}

/**
 * A control, format (zero-width, bidirectional) or separator character that is not whitespace
 * (whitespace has its own diagnosis): the selector would look like a name it is not.
 */
function invisibleProblem(selector: string): string | undefined {
  const found = [...selector].filter((character) => INVISIBLE_CHARACTER.test(character) && !/\s/u.test(character));
  if (found.length === 0) {
    return undefined;
  }
  const which = [...new Set(found.map(codePoint))].join(', ');
  const visible = [...selector].filter((character) => !found.includes(character)).join('');
  const them = found.length > 1 ? 'them' : 'it';
  const what =
    `contains the invisible character${found.length > 1 ? 's' : ''} ${which} (control, zero-width or bidirectional), ` +
    `which make${found.length > 1 ? '' : 's'} it look like a name it is not`;
  return SELECTOR_PATTERN.test(visible)
    ? `${what}; did you mean ${describeValue(visible)}? Remove ${them} and type the exact name`
    : `${what}: remove ${them} and type the exact name`;
}

function codePointCount(text: string): number {
  if (text.length <= MAX_SELECTOR_LENGTH) {
    return text.length; // UTF-16 units: never fewer than the code points
  }
  let count = 0;
  for (const _ of text) {
    count += 1;
  }
  return count;
}

/** Bytes of `text` in UTF-8 (an unpaired surrogate as the 3 bytes of U+FFFD). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

interface Diagnosis {
  /** Verb phrases: "contains whitespace", "has the plural prefix "tools:"". */
  faults: string[];
  advice: string[];
  /** The selector the caller most likely meant, when that is obvious. */
  suggestion?: string;
}

/** Diagnoses a selector without a comma. A selector that matches the grammar has no faults. */
function diagnose(selector: string): Diagnosis {
  if (!/\s/u.test(selector)) {
    return diagnoseWithoutWhitespace(selector);
  }
  const unusual = [...new Set(selector.match(/[^\S ]/gu) ?? [])].map(codePoint);
  const which = unusual.length > 0 ? ` (${unusual.join(', ')})` : '';
  // Whitespace around the selector or around its colon has an obvious fix; inside a name it has none.
  const tightened = selector.trim().replace(/^([^:\s]*)\s*:\s*/u, '$1:');
  if (/\s/u.test(tightened)) {
    return {
      faults: [`contains whitespace${which} inside it`],
      advice: ['Muster names are exact and never contain whitespace: use the exact name'],
    };
  }
  const rest = diagnoseWithoutWhitespace(tightened);
  return {
    faults: [`contains whitespace${which}`, ...rest.faults],
    advice: [...rest.advice, 'remove the whitespace; Muster names are exact'],
    suggestion: rest.suggestion,
  };
}

function diagnoseWithoutWhitespace(selector: string): Diagnosis {
  const colon = selector.indexOf(':');
  if (colon <= 0) {
    const name = selector.slice(colon + 1);
    const preset = isShippedPreset(name) ? name : shippedPresetNearMiss(name);
    return {
      faults: ['has no prefix'],
      advice: [`a selector is ${FORMS}`],
      suggestion: preset === undefined ? undefined : `preset:${preset}`,
    };
  }

  const prefix = selector.slice(0, colon);
  const name = selector.slice(colon + 1);
  const lower = prefix.toLowerCase();
  const singular = lower.endsWith('s') ? lower.slice(0, -1) : lower;

  if (singular === RESERVED_PREFIX) {
    return {
      faults: [`uses the reserved prefix "${prefix}:"`],
      advice: [`use ${FORMS}; to reuse a named selection, define a preset in Muster's toolsetPresets and select it with "preset:<name>"`],
    };
  }
  if (singular === PRESET_ONLY_PREFIX) {
    const rule = name === '' ? '<key>=<value>' : name;
    return {
      faults: [`uses "${prefix}:", which exists only inside presets`],
      advice: [`define a preset in Muster's toolsetPresets with the rule "label: ${rule}" and select it with "preset:<name>"`],
    };
  }

  const faults: string[] = [];
  const advice: string[] = [];
  let kind: string;
  if (isSelectorKind(prefix)) {
    kind = prefix;
  } else if (isSelectorKind(lower)) {
    kind = lower;
    faults.push(`has the prefix "${prefix}:" in the wrong case`);
    advice.push('prefixes are lowercase');
  } else if (isSelectorKind(singular)) {
    kind = singular;
    faults.push(`has the plural prefix "${prefix}:"`);
    advice.push(prefix === lower ? 'prefixes are singular' : 'prefixes are singular and lowercase');
  } else {
    return { faults: [`has the unknown prefix "${prefix}:"`], advice: [`use ${FORMS}`] };
  }

  if (name === '') {
    faults.push(`names no ${kind}`);
    advice.push(`write "${kind}:<name>" with the ${kind}'s exact name`);
    return { faults, advice };
  }
  const preset = kind === 'preset' ? shippedPresetNearMiss(name) : undefined;
  if (preset !== undefined) {
    advice.push('preset names are exact');
  }
  return { faults, advice, suggestion: `${kind}:${preset ?? name}` };
}

function codePoint(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}
