export {
  BUILT_IN_PRESETS,
  MAX_INLINE_SELECTORS,
  MAX_SELECTOR_LENGTH,
  MAX_TOOLSET_HEADER_BYTES,
  PLATFORM_PRESETS,
  SELECTOR_KINDS,
  SELECTOR_PATTERN,
  SHIPPED_PRESETS,
  TOOLNAMES_REMOVED_MESSAGE,
} from './toolset.rules.js';
export type { SelectorKind, ShippedPreset } from './toolset.rules.js';
export { validateToolset } from './validate-toolset.js';
export type { ToolsetViolation, ValidateToolsetOptions } from './validate-toolset.js';
export { toolsetWarnings } from './toolset-warnings.js';
export { findToolNames, toolNamesViolations } from './find-tool-names.js';
export {
  BUILT_IN_PRESET_DESCRIPTIONS,
  checkMusterConfig,
  checkPresets,
  globProblem,
  knownPresets,
  PRESET_RULE_KEYS,
  presetNearMiss,
  readMusterConfig,
  unknownPresets,
} from './presets.rules.js';
export type { ConfiguredPreset, PresetInfo, PresetOrigin, PresetsCheck, UnknownPreset } from './presets.rules.js';
