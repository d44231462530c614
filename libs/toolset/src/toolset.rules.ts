/** The inline toolset grammar, as Muster defines it (docs/contract.md §4). */

export const MAX_INLINE_SELECTORS = 32;

/** At most this many characters (Unicode code points) in one selector. */
export const MAX_SELECTOR_LENGTH = 256;

/** At most this many bytes (UTF-8) in the X-Muster-Toolset header: the selectors joined by commas. */
export const MAX_TOOLSET_HEADER_BYTES = 4096;

/**
 * Characters that change how a selector looks without being seen: controls (Cc), format
 * characters such as zero-width and bidirectional marks (Cf), and line and paragraph separators
 * (Zl, Zp). `preset:read\u200b-only` looks like `preset:read-only` and is another name.
 */
export const INVISIBLE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

export const SELECTOR_KINDS = ['preset', 'server', 'workflow', 'tool'] as const;
export type SelectorKind = (typeof SELECTOR_KINDS)[number];

// JavaScript's \s is Unicode whitespace with or without the u flag, so the flag changes nothing here.
export const SELECTOR_PATTERN = /^(preset|server|workflow|tool):[^\s,]+$/u;

export const BUILT_IN_PRESETS = ['read-only', 'none', 'full'] as const;
export const PLATFORM_PRESETS = ['infrastructure', 'agent-platform'] as const;
export const SHIPPED_PRESETS = [...BUILT_IN_PRESETS, ...PLATFORM_PRESETS] as const;
export type ShippedPreset = (typeof SHIPPED_PRESETS)[number];

/** Refused inline: `toolset:` is reserved, `label:` exists inside presets only. */
export const RESERVED_PREFIX = 'toolset';
export const PRESET_ONLY_PREFIX = 'label';

export const TOOLNAMES_REMOVED_MESSAGE =
  'toolNames never narrowed anything against muster (kagent filters muster\'s meta-tools only); declare a toolset instead, e.g. toolset: ["preset:read-only"]';

export function isSelectorKind(prefix: string): prefix is SelectorKind {
  return (SELECTOR_KINDS as readonly string[]).includes(prefix);
}

export function isShippedPreset(name: string): name is ShippedPreset {
  return (SHIPPED_PRESETS as readonly string[]).includes(name);
}

const looseKey = (name: string): string => name.toLowerCase().replace(/[-_\s]/gu, '');

/**
 * The shipped preset a name almost spells (`read_only`, `Read-Only`, `readonly` → `read-only`),
 * or undefined when the name is a shipped preset itself or resembles none.
 */
export function shippedPresetNearMiss(name: string): ShippedPreset | undefined {
  if (isShippedPreset(name)) {
    return undefined;
  }
  const key = looseKey(name);
  return SHIPPED_PRESETS.find((preset) => looseKey(preset) === key);
}
