/** Where MUSTER_PRESETS says the installation's presets live: Muster's config.yaml as a file, or Muster's ConfigMap. */
export type MusterPresetsLocation =
  | { kind: 'file'; path: string }
  | { kind: 'configmap'; namespace: string; name: string; key: string };

/** Muster's ConfigMap holds its config under this key unless MUSTER_PRESETS names another. */
export const MUSTER_CONFIG_KEY = 'config.yaml';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/u;
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]{1,253}$/u;

/**
 * MUSTER_PRESETS read: `configmap:<namespace>/<name>[#<key>]`, or any other text a file path.
 * Answers the problem in words (naming the expected form) when a configmap: reference is malformed.
 */
export function parseMusterPresets(value: string): MusterPresetsLocation | string {
  if (!value.startsWith('configmap:')) return { kind: 'file', path: value };
  const match = /^configmap:([^/#]*)\/([^/#]*)(?:#(.*))?$/u.exec(value);
  const expected = 'expected configmap:<namespace>/<name> or configmap:<namespace>/<name>#<key> (the key defaults to config.yaml)';
  if (!match) return `MUSTER_PRESETS must be a file path or a ConfigMap reference; ${expected}`;
  const [, namespace, name, key = MUSTER_CONFIG_KEY] = match;
  if (!DNS_LABEL.test(namespace)) return `MUSTER_PRESETS names the namespace ${JSON.stringify(namespace)}, which is not a namespace name (lowercase letters, digits and -); ${expected}`;
  if (!DNS_SUBDOMAIN.test(name)) return `MUSTER_PRESETS names the ConfigMap ${JSON.stringify(name)}, which is not a ConfigMap name (lowercase letters, digits, - and .); ${expected}`;
  if (!CONFIGMAP_KEY.test(key)) return `MUSTER_PRESETS names the key ${JSON.stringify(key)}, which is not a ConfigMap key (letters, digits, -, _ and .); ${expected}`;
  return { kind: 'configmap', namespace, name, key };
}
