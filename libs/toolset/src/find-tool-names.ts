import { TOOLNAMES_REMOVED_MESSAGE } from './toolset.rules.js';
import type { ToolsetViolation } from './validate-toolset.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Where a create/update body still carries the removed `toolNames` argument: `toolNames` and/or
 * `muster.toolNames`. The key counts whatever its value, null and [] included.
 */
export function findToolNames(body: unknown): string[] {
  if (!isRecord(body)) {
    return [];
  }
  const paths: string[] = [];
  if (Object.hasOwn(body, 'toolNames')) {
    paths.push('toolNames');
  }
  if (isRecord(body.muster) && Object.hasOwn(body.muster, 'toolNames')) {
    paths.push('muster.toolNames');
  }
  return paths;
}

export function toolNamesViolations(body: unknown): ToolsetViolation[] {
  return findToolNames(body).map((path) => ({ path, message: TOOLNAMES_REMOVED_MESSAGE }));
}
