import { describeToolset, describeValue } from './toolset.format.js';
import { SELECTOR_PATTERN, shippedPresetNearMiss } from './toolset.rules.js';
import type { ToolsetViolation } from './validate-toolset.js';

/**
 * Non-blocking hints for a valid toolset. A preset that almost spells a shipped one
 * (`preset:read_only`) is accepted, since an installation may define it, but probably a typo.
 */
export function toolsetWarnings(toolset: readonly string[], options: { field?: string } = {}): ToolsetViolation[] {
  const field = options.field ?? 'toolset';
  const warnings: ToolsetViolation[] = [];
  toolset.forEach((selector, index) => {
    if (!SELECTOR_PATTERN.test(selector) || !selector.startsWith('preset:')) {
      return;
    }
    const name = selector.slice('preset:'.length);
    const shipped = shippedPresetNearMiss(name);
    if (shipped !== undefined) {
      warnings.push({
        path: `${field}[${index}]`,
        index,
        selector,
        message:
          `toolset ${describeToolset(toolset)}: preset ${describeValue(name)} at index ${index} is not a shipped preset; ` +
          `did you mean "preset:${shipped}"? Preset names are exact`,
      });
    }
  });
  return warnings;
}
