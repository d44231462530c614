import { createHash, timingSafeEqual } from 'node:crypto';
import { parse } from 'yaml';
import { append, ConfigError } from '@app/common';
import type { Principal } from './principal.js';

/** One static API token as the tokens file declares it: only the SHA-256 of the token is stored. */
export interface ApiTokenEntry {
  name: string;
  sha256: string;
  groups: string[];
}

/** A tokens file that cannot be used: `problems` name each bad entry by position and name. */
export class ApiTokensFileError extends ConfigError {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`API_TOKENS_FILE ${source} is not usable:\n  ${problems.join('\n  ')}`);
    this.name = 'ApiTokensFileError';
  }
}

const NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const KEYS = new Set(['name', 'sha256', 'groups']);
const HOW = 'each entry is {name, sha256, groups}; sha256 is the hex SHA-256 of the token, e.g. printf %s "$TOKEN" | sha256sum';

/** The hex SHA-256 of a token, as the tokens file stores it. */
export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Parses and validates a tokens file (YAML or JSON: a list of entries); throws naming every bad entry. */
export function parseApiTokens(text: string, source = 'API_TOKENS_FILE'): ApiTokenEntry[] {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new ApiTokensFileError(source, [`not YAML or JSON: ${(error as Error).message.split('\n')[0]}`]);
  }
  if (!Array.isArray(document)) throw new ApiTokensFileError(source, [`the file must be a list of tokens; ${HOW}`]);
  const problems: string[] = [];
  const entries: ApiTokenEntry[] = [];
  document.forEach((raw: unknown, index) => {
    const entry = readEntry(raw, `[${index}]`, problems);
    if (entry !== undefined) entries.push(entry);
  });
  append(problems, [...duplicates(entries, 'name'), ...duplicates(entries, 'sha256')]);
  if (problems.length > 0) throw new ApiTokensFileError(source, problems);
  return entries;
}

function readEntry(raw: unknown, at: string, problems: string[]): ApiTokenEntry | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${at}: not a mapping; ${HOW}`);
    return undefined;
  }
  const record = raw as Record<string, unknown>;
  const named = typeof record.name === 'string' ? `${at} (${JSON.stringify(record.name)})` : at;
  const before = problems.length;
  for (const key of Object.keys(record).filter((k) => !KEYS.has(k))) {
    const secret = key === 'token' || key === 'secret' || key === 'value';
    problems.push(`${named}: unknown key "${key}"${secret ? ': store only the SHA-256 of the token (sha256), never the token itself' : `; ${HOW}`}`);
  }
  if (typeof record.name !== 'string' || !NAME.test(record.name)) {
    problems.push(`${named}.name: must be 1-63 letters, digits, ".", "_" or "-" (the subject becomes token:<name>)`);
  }
  if (typeof record.sha256 !== 'string' || !SHA256_HEX.test(record.sha256)) {
    problems.push(`${named}.sha256: must be 64 hex digits, the SHA-256 of the token (printf %s "$TOKEN" | sha256sum)`);
  }
  const groups = record.groups ?? [];
  if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string' && g.trim() !== '' && g === g.trim())) {
    problems.push(`${named}.groups: must be a list of group names (may be empty)`);
  }
  if (problems.length > before) return undefined;
  return { name: record.name as string, sha256: (record.sha256 as string).toLowerCase(), groups: [...(groups as string[])] };
}

function duplicates(entries: ApiTokenEntry[], key: 'name' | 'sha256'): string[] {
  const seen = new Map<string, number>();
  const problems: string[] = [];
  entries.forEach((entry, index) => {
    const first = seen.get(entry[key]);
    if (first === undefined) seen.set(entry[key], index);
    else problems.push(key === 'name' ? `token name "${entry.name}" is declared twice` : `tokens "${entries[first].name}" and "${entry.name}" have the same sha256: each token must be distinct`);
  });
  return problems;
}

/** Recognizes static API tokens by their SHA-256, comparing in constant time. */
export class ApiTokens {
  private readonly digests: { entry: ApiTokenEntry; digest: Buffer }[];

  constructor(entries: ApiTokenEntry[]) {
    this.digests = entries.map((entry) => ({ entry, digest: Buffer.from(entry.sha256, 'hex') }));
  }

  get size(): number {
    return this.digests.length;
  }

  /** The token's principal (`token:<name>`), or undefined. Every entry is compared, so timing says nothing. */
  match(token: string): Principal | undefined {
    const presented = createHash('sha256').update(token, 'utf8').digest();
    let found: ApiTokenEntry | undefined;
    for (const { entry, digest } of this.digests) {
      if (timingSafeEqual(presented, digest) && found === undefined) found = entry;
    }
    return found && { subject: `token:${found.name}`, groups: [...found.groups], method: 'token' };
  }
}
