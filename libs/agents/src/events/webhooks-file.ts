import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ConfigError } from '@app/common';
import { namespaceMatcher } from '@app/auth';

/** A webhook subscription of WEBHOOKS_FILE (docs/configuration.md). */
export interface WebhookSubscription {
  name: string;
  url: string;
  /** The HMAC-SHA256 key of X-Agent-Manager-Signature. */
  secret: string;
  /** Event types it receives (`*` for any text); all when absent. */
  types: string[];
  /** Namespaces whose agents' and changes' events it receives (`*` patterns); every event when absent, namespaced ones only when set. */
  namespaces?: string[];
}

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const TYPE = /^[a-z0-9*][a-z0-9._*-]{0,199}$/;
const NAMESPACE_PATTERN = /^(\*|[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?)$/;
const FIELDS = new Set(['name', 'url', 'secret', 'types', 'namespaces']);

/** Reads and validates WEBHOOKS_FILE; every problem is named by entry and field in one ConfigError. */
export function loadWebhooksFile(path: string): WebhookSubscription[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`WEBHOOKS_FILE ${path} cannot be read: ${(error as Error).message}`);
  }
  return parseWebhooks(text, path);
}

/** The subscriptions of a WEBHOOKS_FILE text: a YAML (or JSON) list of {name, url, secret, types?, namespaces?}. */
export function parseWebhooks(text: string, source: string): WebhookSubscription[] {
  let list: unknown;
  try {
    list = parse(text);
  } catch (error) {
    throw new ConfigError(`WEBHOOKS_FILE ${source} is not YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(list)) throw new ConfigError(`WEBHOOKS_FILE ${source}: must be a YAML list of {name, url, secret, types, namespaces}`);
  const problems: string[] = [];
  const seen = new Set<string>();
  const subscriptions = list.map((entry: unknown, index): WebhookSubscription | undefined => {
    const where = (field: string) => `webhook ${index + 1}${isRecord(entry) && typeof entry.name === 'string' ? ` (${entry.name})` : ''}, ${field}`;
    if (!isRecord(entry)) {
      problems.push(`webhook ${index + 1}: must be a mapping {name, url, secret, types, namespaces}`);
      return undefined;
    }
    const before = problems.length;
    for (const field of Object.keys(entry)) if (!FIELDS.has(field)) problems.push(`${where(field)}: unknown field; the fields are name, url, secret, types and namespaces`);
    const { name, url, secret, types, namespaces } = entry;
    if (typeof name !== 'string' || !NAME.test(name)) problems.push(`${where('name')}: must be a lowercase name of letters, digits and dashes, e.g. chat-ops`);
    else if (seen.has(name)) problems.push(`${where('name')}: another webhook has this name; names must be unique (a subscription's delivery state is kept under it)`);
    else seen.add(name);
    if (typeof url !== 'string' || !isHttpUrl(url)) problems.push(`${where('url')}: must be an http:// or https:// URL, e.g. https://hooks.example.com/agent-manager`);
    if (typeof secret !== 'string' || secret.length < 16) problems.push(`${where('secret')}: must be a string of at least 16 characters (the HMAC-SHA256 key the receiver checks X-Agent-Manager-Signature with)`);
    const typeList = patterns(types, TYPE, where('types'), 'event types, `*` standing for any text, e.g. [io.agent-manager.agent.*]', problems);
    const namespaceList = patterns(namespaces, NAMESPACE_PATTERN, where('namespaces'), 'namespace names or patterns, e.g. [team-a, payments-*]', problems);
    if (problems.length > before) return undefined;
    return { name: name as string, url: url as string, secret: secret as string, types: typeList ?? ['*'], ...(namespaceList && { namespaces: namespaceList }) };
  });
  if (problems.length > 0) throw new ConfigError(`WEBHOOKS_FILE ${source} is not usable:\n  ${problems.join('\n  ')}`);
  return subscriptions as WebhookSubscription[];
}

function patterns(value: unknown, shape: RegExp, where: string, what: string, problems: string[]): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string' && shape.test(item))) {
    problems.push(`${where}: must be a non-empty list of ${what}`);
    return undefined;
  }
  return value as string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** A type pattern as a test: `*` stands for any text. */
export function typeMatcher(pattern: string): (type: string) => boolean {
  const regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\-]/g, '\\$&')).join('.*')}$`);
  return (type) => regex.test(type);
}

/** Whether a subscription receives an event: its type matches a type filter, and with a namespace filter, its namespace one of those. */
export function subscriptionMatcher(subscription: WebhookSubscription): (event: { type: string; namespace: string | null }) => boolean {
  const types = subscription.types.map(typeMatcher);
  const namespaces = subscription.namespaces?.map(namespaceMatcher);
  return (event) => types.some((matches) => matches(event.type)) && (!namespaces || (event.namespace !== null && namespaces.some((matches) => matches(event.namespace!))));
}
