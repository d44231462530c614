import { describeToolset, describeValue } from './toolset.format.js';
import { SELECTOR_PATTERN, shippedPresetNearMiss } from './toolset.rules.js';
import type { ToolsetViolation } from './validate-toolset.js';

/**
 * Non-blocking hints for a valid toolset. A preset that almost spells a shipped one
 * (`preset:read_only`) is accepted, since an installation may define it, but probably a typo;
 * a selector written twice adds nothing; `preset:none` beside other selectors selects nothing
 * they do not (kept as written: the list is never rewritten).
 */
export function toolsetWarnings(toolset: readonly string[], options: { field?: string } = {}): ToolsetViolation[] {
  const field = options.field ?? 'toolset';
  const warnings: ToolsetViolation[] = [];
  const heading = `toolset ${describeToolset(toolset)}: `;
  const first = new Map<string, number>();
  toolset.forEach((selector, index) => {
    const earlier = first.get(selector);
    if (earlier === undefined) {
      first.set(selector, index);
    } else {
      warnings.push({
        path: `${field}[${index}]`,
        index,
        selector,
        message: `${heading}selector ${describeValue(selector)} at index ${index} repeats index ${earlier} and adds nothing; remove it`,
      });
      return;
    }
    if (selector === 'preset:none' && toolset.length > 1) {
      warnings.push({
        path: `${field}[${index}]`,
        index,
        selector,
        message:
          `${heading}"preset:none" (no tools) at index ${index} stands beside other selectors, which contradicts it: ` +
          `send ["preset:none"] alone for a chat-only agent, or remove it`,
      });
      return;
    }
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
          `${heading}preset ${describeValue(name)} at index ${index} is not a shipped preset; ` +
          `did you mean "preset:${shipped}"? Preset names are exact`,
      });
    }
  });
  return warnings;
}
