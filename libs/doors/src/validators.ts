import { Transform } from 'class-transformer';
import { registerDecorator, ValidateIf, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { validateToolset } from '@app/toolset';

/** A toolset checked by the pure grammar of libs/toolset (every violation, its own messages). */
export function IsToolset(options: { required?: boolean } = {}, validation?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isToolset',
      target: target.constructor,
      propertyName: propertyName as string,
      options: validation,
      constraints: [options.required ?? false],
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          validateToolset(value, { field: args.property, required: args.constraints[0] as boolean }).length === 0,
        defaultMessage: () => 'toolset is invalid',
      },
    });
  };
}

// Kubernetes object metadata rules (apimachinery validation): a qualified name with an
// optional DNS-subdomain prefix for keys; label values at most 63 characters.
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Why a label or annotation key is not one Kubernetes accepts, or null when it is. */
export function keyProblem(key: string): string | null {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? [null, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== null && (prefix.length === 0 || prefix.length > 253 || !PREFIX.test(prefix))) return `key "${key}" has a prefix that is not a DNS subdomain (e.g. example.com/team)`;
  if (!NAME_PART.test(name)) return `key "${key}" must be at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`;
  return null;
}

/** Labels the chart sets itself (they would silently win over the caller's). */
const CHART_LABELS = new Set(['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'app.kubernetes.io/managed-by', 'helm.sh/chart']);
/** Annotations helm or agent-manager own: helm's release ownership, its hooks and resource policy, and ours (displayName). */
const RESERVED_ANNOTATION = /^(meta\.helm\.sh\/|helm\.sh\/|agent-manager\.giantswarm\.io\/)/;

function reservedProblem(key: string, labels: boolean): string | null {
  if (labels && CHART_LABELS.has(key)) return `label "${key}" is set by the agent chart itself: remove it`;
  if (!labels && RESERVED_ANNOTATION.test(key)) {
    return key.startsWith('agent-manager.') ? `annotation "${key}" is agent-manager's own: remove it (set displayName for the display name)` : `annotation "${key}" belongs to helm and would change how helm manages the release: remove it`;
  }
  return null;
}

/**
 * Kubernetes has no count limit for labels; 64 keeps an Agent's metadata readable and every status
 * read cheap. Annotations: the API server accepts 256 KiB per object (keys plus values, UTF-8 bytes);
 * 2 KiB of that stay free for helm's release annotations and agent-manager's display name (≤ 253 chars).
 */
export const MAX_LABELS = 64;
export const MAX_ANNOTATION_BYTES = 256 * 1024 - 2048;

/** The count or size cap a labels or annotations map breaks, or null. */
export function metadataCapProblem(value: Record<string, unknown>, labels: boolean): string | null {
  const keys = Object.keys(value);
  if (labels) {
    return keys.length > MAX_LABELS ? `has ${keys.length} labels, more than the ${MAX_LABELS} allowed: keep labels for selection and put the rest in annotations` : null;
  }
  let bytes = 0;
  for (const key of keys) bytes += Buffer.byteLength(key) + (typeof value[key] === 'string' ? Buffer.byteLength(value[key]) : 0);
  if (bytes <= MAX_ANNOTATION_BYTES) return null;
  return `total ${bytes} bytes (keys and values, UTF-8), more than the ${MAX_ANNOTATION_BYTES} allowed: the Kubernetes API server accepts 256 KiB of annotations per object, of which 2 KiB stay free for helm's and agent-manager's own; keep large data out of annotations`;
}

export function metadataProblems(value: unknown, labels: boolean): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['must be an object whose values are strings, e.g. {"team": "sre"}'];
  const cap = metadataCapProblem(value as Record<string, unknown>, labels);
  if (cap) return [cap];
  const problems: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const bad = keyProblem(key) ?? reservedProblem(key, labels);
    if (bad) problems.push(bad);
    if (typeof v !== 'string') problems.push(`value of "${key}" must be a string`);
    else if (labels && !LABEL_VALUE.test(v)) problems.push(`value of "${key}" must be at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit (or empty)`);
  }
  return problems;
}

/**
 * At most `max` characters counted as JSON Schema's maxLength counts them (Unicode code points),
 * as the chart's values schema and the OpenAPI document do. class-validator's MaxLength leaves
 * emoji variation selectors uncounted, so text it let through was refused later by helm.
 */
export function MaxCodePoints(max: number, validation?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'maxCodePoints',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [max],
      options: validation,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || codePoints(value) <= max,
        defaultMessage: (args?: ValidationArguments) => `${args?.property} must be at most ${max} characters (it has ${codePoints(String(args?.value))})`,
      },
    });
  };
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Labels or annotations as Kubernetes accepts them on the Agent (keys; label values too). */
export function IsMetadataMap(kind: 'labels' | 'annotations', validation?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isMetadataMap',
      target: target.constructor,
      propertyName: propertyName as string,
      options: validation,
      validator: {
        validate: (value: unknown) => metadataProblems(value, kind === 'labels').length === 0,
        defaultMessage: (args?: ValidationArguments) => `${args?.property}: ${metadataProblems(args?.value, kind === 'labels').join('; ')}`,
      },
    });
  };
}

/**
 * A whole number sent as decimal digits (a query string's "20") is read as that number; anything
 * else (true, "0x1", "1e0", " 2") is left as sent, for @IsInt to refuse. class-transformer's
 * @Type(() => Number) read all of those as numbers.
 */
export function WholeNumberText(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value));
}

/** Optional but never null: an absent field keeps its value, a null one is refused. */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/** Why a list filter `key` or `key=value` can never match a label, or null when it can. */
export function labelSelectorProblem(selector: string): string | null {
  const at = selector.indexOf('=');
  const [key, value] = at < 0 ? [selector, null] : [selector.slice(0, at), selector.slice(at + 1)];
  const bad = keyProblem(key);
  if (bad) return `label must be key=value or key (one label): ${bad}`;
  if (value !== null && !LABEL_VALUE.test(value)) return `label must be key=value or key (one label): value "${value}" is not a label value`;
  return null;
}

/** A list filter on one label: `key=value`, or `key` for any value. */
export function IsLabelSelector(validation?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isLabelSelector',
      target: target.constructor,
      propertyName: propertyName as string,
      options: validation,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && labelSelectorProblem(value) === null,
        defaultMessage: (args?: ValidationArguments) => labelSelectorProblem(String(args?.value)) ?? 'label must be key=value or key',
      },
    });
  };
}
