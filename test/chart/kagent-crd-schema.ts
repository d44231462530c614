import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

/**
 * Offline validation of rendered kagent objects against upstream kagent's CRDs (test/chart/crds/,
 * verbatim from kagent-dev/kagent): the full openAPIV3Schema with ajv, plus the CEL rules
 * (x-kubernetes-validations) evaluated by hand, since neither ajv nor the test API server
 * (Kubernetes 1.20) runs CEL. A rule this file does not know fails the check, naming it: a newer
 * upstream CRD cannot pass by a rule nobody evaluated.
 */

const CRD_DIR = fileURLToPath(new URL('./crds', import.meta.url));

type Json = Record<string, any>;

export interface CrdVersion {
  kind: string;
  apiVersion: string;
  schema: Json;
}

/** The version `version` of the CRD in test/chart/crds/<file>. */
export function upstreamCrd(file: string, version: string): CrdVersion {
  const crd = parse(readFileSync(join(CRD_DIR, file), 'utf8')) as Json;
  const served = (crd.spec.versions as Json[]).find((v) => v.name === version);
  if (!served) throw new Error(`${file} has no version ${version}`);
  return { kind: crd.spec.names.kind, apiVersion: `${crd.spec.group}/${version}`, schema: served.schema.openAPIV3Schema };
}

/** The CRD file with every x-kubernetes-validations removed (what test/cluster/crds/ holds). */
export function withoutCel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCel);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'x-kubernetes-validations').map(([key, v]) => [key, withoutCel(v)]));
  }
  return value;
}

/** The rules of kagent's v1alpha3 AgentTemplate and RemoteMCPServer CRDs, as JavaScript. */
const has = (self: Json, field: string) => self[field] !== undefined && self[field] !== null;
const size = (value: unknown) => (typeof value === 'string' || Array.isArray(value) ? value.length : 0);
const CEL: Record<string, (self: Json) => boolean> = {
  '!(has(self.systemPrompt) && has(self.systemPromptFrom))': (s) => !(has(s, 'systemPrompt') && has(s, 'systemPromptFrom')),
  '(has(self.oci) ? 1 : 0) + (has(self.git) ? 1 : 0) + (has(self.bucket) ? 1 : 0) == 1': (s) => ['oci', 'git', 'bucket'].filter((f) => has(s, f)).length === 1,
  "!has(self.path) || (!self.path.startsWith('/') && !self.path.split('/').exists(p, p == '..'))": (s) => !has(s, 'path') || (!String(s.path).startsWith('/') && !String(s.path).split('/').includes('..')),
  'has(self.mcp) != has(self.agent)': (s) => has(s, 'mcp') !== has(s, 'agent'),
  "!self.url.startsWith('http://') || !has(self.tls)": (s) => !String(s.url).startsWith('http://') || !has(s, 'tls'),
  "!(has(self.allowedNamespaces) && has(self.allowedNamespaces.from) && (self.allowedNamespaces.from == 'All' || self.allowedNamespaces.from == 'Selector') && has(self.tls) && has(self.tls.caCertSecretRef) && size(self.tls.caCertSecretRef) > 0)": (s) =>
    !(has(s, 'allowedNamespaces') && ['All', 'Selector'].includes(s.allowedNamespaces.from) && has(s, 'tls') && size(s.tls.caCertSecretRef) > 0),
  "!(self.from == 'Selector' && !has(self.selector))": (s) => !(s.from === 'Selector' && !has(s, 'selector')),
  '(has(self.value) && !has(self.valueFrom)) || (!has(self.value) && has(self.valueFrom))': (s) => has(s, 'value') !== has(s, 'valueFrom'),
  '!(has(self.caCertSecretKey) && size(self.caCertSecretKey) > 0 && (!has(self.caCertSecretRef) || size(self.caCertSecretRef) == 0))': (s) => !(size(s.caCertSecretKey) > 0 && size(s.caCertSecretRef) === 0),
  '!(has(self.caCertSecretRef) && size(self.caCertSecretRef) > 0 && (!has(self.caCertSecretKey) || size(self.caCertSecretKey) == 0))': (s) => !(size(s.caCertSecretRef) > 0 && size(s.caCertSecretKey) === 0),
  '!(has(self.disableSystemCAs) && self.disableSystemCAs && (!has(self.disableVerify) || !self.disableVerify) && (!has(self.caCertSecretRef) || size(self.caCertSecretRef) == 0))': (s) =>
    !(s.disableSystemCAs === true && s.disableVerify !== true && size(s.caCertSecretRef) === 0),
};

/** Go's RE2 POSIX classes inside brackets ([^[:space:]@]) as JavaScript spells them. */
function jsPatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsPatterns);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(Object.entries(schema).map(([key, v]) => [key, key === 'pattern' && typeof v === 'string' ? v.replaceAll('[:space:]', '\\s') : jsPatterns(v)]));
  }
  return schema;
}

function ajv(): Ajv {
  const instance = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  // x-kubernetes-list-type: set (items distinct) and map (distinct by x-kubernetes-list-map-keys).
  instance.addKeyword({
    keyword: 'x-kubernetes-list-type',
    schemaType: 'string',
    type: 'array',
    validate: function listType(type: string, data: unknown[], parent?: Json) {
      const keys: string[] = type === 'map' ? ((parent?.['x-kubernetes-list-map-keys'] as string[] | undefined) ?? []) : [];
      const identities = data.map((item) => JSON.stringify(type === 'map' ? keys.map((key) => (item as Json)[key]) : item));
      return type === 'atomic' || new Set(identities).size === identities.length;
    },
  });
  return instance;
}

const compiled = new Map<object, ValidateFunction>();

/**
 * Every way `object` breaks the CRD version: ajv's errors on the openAPIV3Schema, then the CEL
 * rules it breaks. An empty list: the object is valid.
 */
export function crdErrors(crd: CrdVersion, object: Json): string[] {
  let validate = compiled.get(crd.schema);
  if (!validate) {
    validate = ajv().compile(jsPatterns(withoutCel(crd.schema)) as object);
    compiled.set(crd.schema, validate);
  }
  const errors: string[] = [];
  if (object.apiVersion !== crd.apiVersion || object.kind !== crd.kind) errors.push(`is ${object.apiVersion} ${object.kind}, not ${crd.apiVersion} ${crd.kind}`);
  if (!validate(object)) errors.push(...(validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`));
  celErrors(crd.schema, object, '', errors);
  return errors;
}

function celErrors(schema: Json, value: unknown, path: string, errors: string[]): void {
  if (value === undefined || value === null) return;
  for (const { rule, message } of (schema['x-kubernetes-validations'] as { rule: string; message?: string }[] | undefined) ?? []) {
    const check = CEL[rule];
    if (!check) errors.push(`${path || '/'}: CEL rule not evaluated by test/chart/kagent-crd-schema.ts: ${rule}`);
    else if (!check(value as Json)) errors.push(`${path || '/'}: ${message ?? rule}`);
  }
  if (Array.isArray(value) && schema.items) value.forEach((item, i) => celErrors(schema.items as Json, item, `${path}/${i}`, errors));
  else if (typeof value === 'object' && schema.properties) {
    for (const [key, sub] of Object.entries(schema.properties as Record<string, Json>)) celErrors(sub, (value as Json)[key], `${path}/${key}`, errors);
  }
}
