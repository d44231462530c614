import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { availableParallelism, hostname, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import { parseMusterPresets, type MusterPresetsLocation } from './muster-presets.js';
import {
  ArrayMinSize,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  NotContains,
  ValidateBy,
  validateSync,
} from 'class-validator';

import { PROJECT_ROOT } from './project-root.js';
import { reservedSubjectPart } from './reserved-subjects.js';

export const LOG_LEVELS = ['error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** A claim name, or a dotted path into nested claims (realm_access.roles). */
const CLAIM_PATH = /^[A-Za-z_][\w:-]*(\.[A-Za-z_][\w:-]*)*$/;

/** The service's settings, read once from the environment and validated at start. */
export class AppConfig {
  @Transform(({ value }) => numberSetting(value, 8080))
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number;

  /** The address to listen on: loopback by default; 0.0.0.0 (or ::) listens on all interfaces. */
  @Transform(({ value }) => (value === undefined || value === '' ? '127.0.0.1' : value))
  @IsString()
  @MinLength(1)
  HOST: string;

  @Transform(({ value }) => (value === undefined || value === '' ? `file:${join(PROJECT_ROOT, 'data', 'agent-manager.db')}` : value))
  @Matches(/^(file:.+|postgres(ql)?:\/\/.+)$/, {
    message: 'DATABASE_URL must be file:<path> (SQLite) or postgresql://… (PostgreSQL)',
  })
  // The migrator and the service each open their own connection: in memory, each gets an empty database of its own.
  @NotContains(':memory:', { message: 'DATABASE_URL cannot be an in-memory SQLite database (:memory:): the service would run on an empty one; give a file path, e.g. file:/tmp/agent-manager.db' })
  DATABASE_URL: string;

  @IsOptional()
  @IsString()
  KUBECONFIG?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  HELM_BIN?: string;

  @Transform(({ value }) => (value === undefined || value === '' ? 'charts/agent' : value))
  @IsString()
  AGENT_CHART: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  AGENT_CHART_VERSION?: string;

  /** Pull an oci:// AGENT_CHART (and rollout targets) over plain http: for a registry without TLS, e.g. one on loopback. */
  @Transform(({ value }) => booleanSetting(value, false))
  @IsBoolean({ message: 'AGENT_CHART_PLAIN_HTTP must be true or false' })
  AGENT_CHART_PLAIN_HTTP: boolean;

  /** Where charts pulled from a registry are kept, one folder per reference and version; default <tmp>/agent-manager-charts-<user>. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  AGENT_CHART_CACHE_DIR?: string;

  @Transform(({ value }) => (value === undefined || value === '' ? 'log' : value))
  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel;

  /** json (one JSON object a line) or pretty (for a person); unset: pretty on a terminal, json otherwise (a pipe, a container). */
  @IsOptional()
  @IsIn(LOG_FORMATS, { message: `LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}` })
  LOG_FORMAT?: LogFormat;

  /** Serve /metrics on this port (same HOST) instead of the main one; unset, /metrics is on PORT. */
  @IsOptional()
  @Transform(({ value }) => numberSetting(value, undefined))
  @IsInt({ message: 'METRICS_PORT must be a port number from 1 to 65535, or be left unset to serve /metrics on PORT' })
  @Min(1)
  @Max(65535)
  METRICS_PORT?: number;

  @Transform(({ value }) => numberSetting(value, 300))
  @IsInt()
  @Min(1)
  @Max(3600)
  HELM_TIMEOUT_SECONDS: number;

  /**
   * The toolset selection a bare /mcp (and `agent-manager mcp` without --toolsets) gets, written
   * like the URL's query: empty for the toolsets declared default, `revisions` for those plus
   * revisions, `only=agents` for agents alone (plus the always-on ones).
   */
  @Transform(({ value }) => (value === undefined ? '' : String(value).trim()))
  @IsString()
  @Matches(/^[^\s]*$/, { message: 'MCP_DEFAULT_TOOLSETS must be a query string without spaces, e.g. revisions or only=agents' })
  MCP_DEFAULT_TOOLSETS: string;

  /** Query keys of the /mcp URL that are never read as toolset names (e.g. `scopes` for an authorization server). */
  @Transform(({ value }) => commaList(value === undefined ? 'scopes' : value))
  @IsString({ each: true })
  MCP_IGNORED_QUERY_KEYS: string[];

  /**
   * Host names (any port) that every route but /healthz, /readyz and /metrics answers (REST, /docs,
   * /mcp), against DNS rebinding: a request whose Host or Origin names another host is refused with
   * 403. `*` allows any (behind an ingress that checks Host). MCP_ALLOWED_HOSTS is its old name.
   */
  @Transform(({ value }) => commaList(value === undefined || value === '' ? 'localhost,127.0.0.1,[::1]' : value))
  @ArrayMinSize(1, { message: 'ALLOWED_HOSTS must name at least one host, e.g. localhost,127.0.0.1,[::1], or * for any' })
  @Matches(/^(\*|\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?)$/, {
    each: true,
    message: 'ALLOWED_HOSTS must be host names without port or scheme, comma-separated (IPv6 in brackets: [::1]), or *',
  })
  ALLOWED_HOSTS: string[];

  /** Settings read under an old name: one sentence each, logged as a warning at start. */
  deprecations: string[] = [];

  /**
   * Not a setting: false in a command (`agent-manager mcp`, `store rebuild`), which then runs no
   * recovery sweep, no reconciler and no watches: that is the serving replicas' work.
   */
  backgroundWork = true;

  /** How long a replica's lock on one agent lasts without renewal; a dead replica's lock is taken over after it. */
  @Transform(({ value }) => numberSetting(value, 30))
  @IsInt()
  @Min(1)
  @Max(3600)
  LEASE_TTL_SECONDS: number;

  /**
   * How long a write waits in line for another write on the same agent (any replica) before it
   * is refused with 409; writes to one agent are applied one after another in arrival order.
   */
  @Transform(({ value }) => numberSetting(value, 30))
  @IsInt()
  @Min(0)
  @Max(3600)
  WRITE_QUEUE_SECONDS: number;

  /**
   * Whether every recovery sweep is followed by a reconcile pass that acts on what it finds (records
   * landed creates, frees releases helm holds pending-* once their writer's lease expired, …). Off, the
   * reconciler runs only when asked (POST /api/v1/reconcile, reconcile_agents).
   */
  @Transform(({ value }) => booleanSetting(value, true))
  @IsBoolean({ message: 'RECONCILE_AUTOMATIC must be true or false' })
  RECONCILE_AUTOMATIC: boolean;

  /**
   * How often the elected reconciler decides every agent again even when nothing it watches
   * changed (a full resync); between resyncs it decides only agents whose release, live Agent or
   * record changed.
   */
  @Transform(({ value }) => numberSetting(value, 600))
  @IsInt({ message: 'RECONCILE_RESYNC_SECONDS must be a whole number of seconds, e.g. 600' })
  @Min(1)
  @Max(86_400)
  RECONCILE_RESYNC_SECONDS: number;

  /**
   * The namespaces whose agent releases and Agents the service watches (for the reconciler and
   * status), comma-separated; empty: the whole cluster (the service account then lists and
   * watches Secrets and Agents cluster-wide).
   */
  @Transform(({ value }) => commaList(value === undefined ? '' : value))
  @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { each: true, message: 'WATCH_NAMESPACES must be namespace names, comma-separated, e.g. team-a,team-b' })
  WATCH_NAMESPACES: string[];

  /** At most this many reconcile decisions per second during a full resync, so its cost to the control plane stays bounded. */
  @Transform(({ value }) => numberSetting(value, 200))
  @IsInt({ message: 'RECONCILE_RATE must be a whole number of decisions per second, e.g. 200' })
  @Min(1)
  @Max(100_000)
  RECONCILE_RATE: number;

  /** How long a write's Idempotency-Key (requestId on MCP) answers retries with the first answer. */
  @Transform(({ value }) => numberSetting(value, 86_400))
  @IsInt()
  @Min(1)
  @Max(2_592_000)
  IDEMPOTENCY_TTL_SECONDS: number;

  /**
   * How long finished journal entries (writes and refusals) are kept, in days: the recovery sweep
   * removes older ones in bounded batches (never a pending write, nor an agent's last operation). 0 keeps them forever.
   */
  @Transform(({ value }) => numberSetting(value, 90))
  @IsInt({ message: 'JOURNAL_RETENTION_DAYS must be a whole number of days, e.g. 90 (0 keeps the journal forever)' })
  @Min(0)
  @Max(36_500)
  JOURNAL_RETENTION_DAYS: number;

  /** On SIGTERM: how long running writes may take to finish before the store closes. */
  @Transform(({ value }) => numberSetting(value, 60))
  @IsInt()
  @Min(0)
  @Max(3600)
  SHUTDOWN_TIMEOUT_SECONDS: number;

  /** This replica's name in leases and the journal; defaults to host name, process id and a random suffix. */
  @Transform(({ value }) => (value === undefined || value === '' ? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}` : value))
  @IsString()
  @MinLength(1)
  // "recovery@<replica>" is the owner recovery sweeps take leases under (libs/agents RECOVERY_PREFIX).
  @Matches(/^(?!recovery@)/, { message: 'REPLICA_ID must not start with "recovery@": that prefix marks recovery sweeps in leases' })
  REPLICA_ID: string;

  /** The OIDC issuer whose bearer tokens are accepted (discovery at <issuer>/.well-known/openid-configuration). */
  @IsOptional()
  @Matches(/^(https:\/\/[^\s?#]+|http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(\/[^\s?#]*)?)$/, {
    message: 'OIDC_ISSUER_URL must be an https:// URL without query or fragment (http:// only for localhost), e.g. https://dex.example.com',
  })
  OIDC_ISSUER_URL?: string;

  /** The `aud` an OIDC token must carry; required with OIDC_ISSUER_URL. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  OIDC_AUDIENCE?: string;

  /** The claim that names the caller (a dotted path reaches into objects). */
  @Transform(({ value }) => (value === undefined || value === '' ? 'sub' : value))
  @Matches(CLAIM_PATH, { message: 'OIDC_USERNAME_CLAIM must be a claim name, e.g. sub, email or preferred_username' })
  OIDC_USERNAME_CLAIM: string;

  /** The claim that lists the caller's groups (a dotted path reaches into objects, e.g. realm_access.roles). */
  @Transform(({ value }) => (value === undefined || value === '' ? 'groups' : value))
  @Matches(CLAIM_PATH, { message: 'OIDC_GROUPS_CLAIM must be a claim name, e.g. groups or realm_access.roles' })
  OIDC_GROUPS_CLAIM: string;

  /** A YAML or JSON list of static API tokens `{name, sha256, groups}`, read and validated at start. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  API_TOKENS_FILE?: string;

  /** The authorization policy (YAML: roles and bindings), read and validated at start. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  AUTHZ_POLICY_FILE?: string;

  /** Blueprints the installation ships (YAML): created when absent, upgraded while untouched by an operator. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  BLUEPRINTS_FILE?: string;

  /**
   * Webhook subscriptions for change events (docs/contract.md §14): a YAML list of
   * `{name, url, secret, types, namespaces}`, read and validated at start. Unset: events are only
   * kept in the store (GET /api/v1/events).
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  WEBHOOKS_FILE?: string;

  /** A delivery that failed this many times is `dead` (not tried again; later events of its subject go on). */
  @Transform(({ value }) => numberSetting(value, 15))
  @IsInt({ message: 'WEBHOOK_MAX_ATTEMPTS must be a whole number of attempts, e.g. 15' })
  @Min(1)
  @Max(1000)
  WEBHOOK_MAX_ATTEMPTS: number;

  /** The wait after a delivery's first failure, in milliseconds; doubled after each further one up to WEBHOOK_BACKOFF_MAX_MS. */
  @Transform(({ value }) => numberSetting(value, 1000))
  @IsInt({ message: 'WEBHOOK_BACKOFF_MS must be a whole number of milliseconds, e.g. 1000' })
  @Min(10)
  @Max(3_600_000)
  WEBHOOK_BACKOFF_MS: number;

  /** The longest wait between two attempts of a delivery, in milliseconds. */
  @Transform(({ value }) => numberSetting(value, 600_000))
  @IsInt({ message: 'WEBHOOK_BACKOFF_MAX_MS must be a whole number of milliseconds, e.g. 600000' })
  @Min(10)
  @Max(86_400_000)
  WEBHOOK_BACKOFF_MAX_MS: number;

  /** How long a receiver may take to answer a delivery before the attempt counts as failed. */
  @Transform(({ value }) => numberSetting(value, 10))
  @IsInt({ message: 'WEBHOOK_TIMEOUT_SECONDS must be a whole number of seconds, e.g. 10' })
  @Min(1)
  @Max(300)
  WEBHOOK_TIMEOUT_SECONDS: number;

  /** How often the delivering replica looks for new events and retries that are due, in milliseconds. */
  @Transform(({ value }) => numberSetting(value, 1000))
  @IsInt({ message: 'WEBHOOK_POLL_MS must be a whole number of milliseconds, e.g. 1000' })
  @Min(10)
  @Max(600_000)
  WEBHOOK_POLL_MS: number;

  /**
   * Where the installation's Muster presets live: Muster's config.yaml as a file, or
   * `configmap:<namespace>/<name>[#<key>]` (Muster's ConfigMap, key config.yaml by default).
   * Unset: preset names are not checked (a write naming one answers a warning).
   */
  @IsOptional()
  @IsString()
  @ValidateBy({
    name: 'musterPresets',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || typeof parseMusterPresets(value) !== 'string',
      defaultMessage: (args) => parseMusterPresets(String(args?.value)) as string,
    },
  })
  MUSTER_PRESETS?: string;

  /** Serve without authentication on a non-loopback HOST; needed explicitly, never implied. */
  @Transform(({ value }) => booleanSetting(value, false))
  @IsBoolean({ message: 'AUTH_DISABLED must be true or false' })
  AUTH_DISABLED: boolean;

  /** The principal of `agent-manager mcp` (stdio), authorized through the same policy. */
  @Transform(({ value }) => (value === undefined || value === '' ? `local:${osUser()}` : value))
  @IsString()
  @Matches(/^\S+$/, { message: 'AUTH_STDIO_SUBJECT must be one word without spaces, e.g. local:alice' })
  @ValidateBy({
    name: 'notReservedSubject',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || reservedSubjectPart(value, ['local:']) === undefined,
      defaultMessage: (args) =>
        `AUTH_STDIO_SUBJECT takes "${reservedSubjectPart(String(args?.value), ['local:'])}", which names the service's other principals (API tokens are token:<name>); ` +
        `name the local user instead, e.g. local:alice, or leave it unset for local:<your user>`,
    },
  })
  AUTH_STDIO_SUBJECT: string;

  /** The URL clients reach this service at (the OAuth protected resource); default http://<HOST>:<PORT>. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, {
    message: 'PUBLIC_URL must be an http(s) URL without query or fragment, e.g. https://agent-manager.example.com',
  })
  PUBLIC_URL?: string;

  /** Helm calls and Kubernetes reads made for a request impersonate its principal; default: true when auth is on. */
  @IsOptional()
  @Transform(({ value }) => booleanSetting(value, undefined))
  @IsBoolean({ message: 'KUBE_IMPERSONATE must be true or false' })
  KUBE_IMPERSONATE: boolean;

  /** Origins allowed by CORS, comma-separated; none (CORS off) by default. */
  @Transform(({ value }) => commaList(value === undefined ? '' : value))
  @Matches(/^https?:\/\/[^\s/?#]+$/, {
    each: true,
    message: 'CORS_ORIGINS must be origins (scheme://host[:port], no path), comma-separated, e.g. https://portal.example.com',
  })
  CORS_ORIGINS: string[];

  /** An MCP session unused for this long is closed. */
  @Transform(({ value }) => numberSetting(value, 900))
  @IsInt()
  @Min(10)
  @Max(86_400)
  MCP_SESSION_IDLE_SECONDS: number;

  /** Open MCP sessions one principal may hold at once. */
  @Transform(({ value }) => numberSetting(value, 50))
  @IsInt()
  @Min(1)
  @Max(10_000)
  MCP_SESSIONS_PER_PRINCIPAL: number;

  /**
   * Whether destructive MCP tools (delete_agent, rollback_agent, delete_blueprint, fleet-wide writes)
   * first ask the person at a client that declared form elicitation, and run only on their accept.
   * A client without elicitation is never asked; the policy is the control for it.
   */
  @Transform(({ value }) => booleanSetting(value, true))
  @IsBoolean({ message: 'MCP_CONFIRM_DESTRUCTIVE must be true or false' })
  MCP_CONFIRM_DESTRUCTIVE: boolean;

  /** The largest request body accepted (413 above it). */
  @Transform(({ value }) => numberSetting(value, 1_048_576))
  @IsInt()
  @Min(1024)
  @Max(104_857_600)
  BODY_LIMIT_BYTES: number;

  /** Authentication is on when an OIDC issuer or an API token file is configured. */
  get authEnabled(): boolean {
    return this.OIDC_ISSUER_URL !== undefined || this.API_TOKENS_FILE !== undefined;
  }

  /** PUBLIC_URL without a trailing slash, else the address the service listens on. */
  get publicUrl(): string {
    if (this.PUBLIC_URL !== undefined) return this.PUBLIC_URL.replace(/\/+$/, '');
    const host = isIP(this.HOST) === 6 ? `[${this.HOST}]` : this.HOST;
    return `http://${host}:${this.PORT}`;
  }
  /** At most this many helm processes at once (writes keep one slot for themselves); default twice the cores. */
  @Transform(({ value }) => numberSetting(value, 2 * availableParallelism()))
  @IsInt()
  @Min(1)
  @Max(1024)
  HELM_CONCURRENCY: number;

  /** How long a call waits for a free helm process before it is refused with 503 and Retry-After. */
  @Transform(({ value }) => numberSetting(value, 10))
  @IsInt()
  @Min(0)
  @Max(3600)
  HELM_QUEUE_SECONDS: number;

  get storeProvider(): 'sqlite' | 'postgresql' {
    return this.DATABASE_URL.startsWith('file:') ? 'sqlite' : 'postgresql';
  }

  /**
   * A local chart path made absolute (helm runs with its own cwd): against the working directory,
   * or, when it is not there, the project's own (charts/agent from anywhere); other references as given.
   */
  /** The chart every write installs or upgrades to: the one place that decides it. */
  /** MUSTER_PRESETS read (validated at start), or undefined when unset. */
  get musterPresets(): MusterPresetsLocation | undefined {
    if (this.MUSTER_PRESETS === undefined) return undefined;
    const location = parseMusterPresets(this.MUSTER_PRESETS);
    return typeof location === 'string' ? undefined : location;
  }

  get agentChart(): { ref: string; version?: string } {
    return { ref: this.chartRef, version: this.AGENT_CHART_VERSION };
  }

  get chartRef(): string {
    const ref = this.AGENT_CHART;
    const local = ref.startsWith('.') || ref.startsWith('/') || ref.startsWith('charts/');
    if (!local || isAbsolute(ref)) return ref;
    const here = resolve(process.cwd(), ref);
    const ours = resolve(PROJECT_ROOT, ref);
    return !existsSync(here) && existsSync(ours) ? ours : here;
  }
}

export class ConfigError extends Error {}

/** True for addresses only this machine reaches: 127.0.0.0/8, ::1 (also IPv4-mapped), localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const family = isIP(bare);
  return family !== 0 && LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/**
 * A whole number written in decimal digits; unset (undefined) gives `fallback`. Anything else
 * (" ", "0x10", "1e3", "8080abc") is NaN, refused by the property's @IsInt naming the variable:
 * Number() read " " as 0 (a random port) and "0x10" as 16.
 */
function numberSetting(value: unknown, fallback: number | undefined): unknown {
  if (value === undefined) return fallback;
  const text = String(value).trim();
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN;
}

function booleanSetting(value: unknown, fallback: boolean | undefined): unknown {
  if (value === undefined || value === '') return fallback;
  const text = String(value).trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : value;
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    // A container user without a passwd entry.
    return process.env.USER ?? `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

function commaList(value: unknown): string[] {
  return String(value)
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const EMPTY_MEANS_EMPTY = new Set(['MCP_IGNORED_QUERY_KEYS']);

const KEYS = ['PORT', 'HOST', 'DATABASE_URL', 'KUBECONFIG', 'HELM_BIN', 'AGENT_CHART', 'AGENT_CHART_VERSION', 'AGENT_CHART_PLAIN_HTTP', 'AGENT_CHART_CACHE_DIR', 'LOG_LEVEL', 'LOG_FORMAT', 'METRICS_PORT', 'HELM_TIMEOUT_SECONDS', 'MCP_DEFAULT_TOOLSETS', 'MCP_IGNORED_QUERY_KEYS', 'ALLOWED_HOSTS', 'LEASE_TTL_SECONDS', 'WRITE_QUEUE_SECONDS', 'IDEMPOTENCY_TTL_SECONDS', 'JOURNAL_RETENTION_DAYS', 'SHUTDOWN_TIMEOUT_SECONDS', 'REPLICA_ID', 'OIDC_ISSUER_URL', 'OIDC_AUDIENCE', 'OIDC_USERNAME_CLAIM', 'OIDC_GROUPS_CLAIM', 'API_TOKENS_FILE', 'AUTHZ_POLICY_FILE', 'AUTH_DISABLED', 'AUTH_STDIO_SUBJECT', 'PUBLIC_URL', 'KUBE_IMPERSONATE', 'CORS_ORIGINS', 'MCP_SESSION_IDLE_SECONDS', 'MCP_SESSIONS_PER_PRINCIPAL', 'MCP_CONFIRM_DESTRUCTIVE', 'BODY_LIMIT_BYTES', 'HELM_CONCURRENCY', 'HELM_QUEUE_SECONDS', 'RECONCILE_AUTOMATIC', 'RECONCILE_RESYNC_SECONDS', 'RECONCILE_RATE', 'WATCH_NAMESPACES', 'BLUEPRINTS_FILE', 'MUSTER_PRESETS', 'WEBHOOKS_FILE', 'WEBHOOK_MAX_ATTEMPTS', 'WEBHOOK_BACKOFF_MS', 'WEBHOOK_BACKOFF_MAX_MS', 'WEBHOOK_TIMEOUT_SECONDS', 'WEBHOOK_POLL_MS'];

/** Reads and validates the environment; throws a ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // A variable set to nothing (or blanks) is unset, as most of them always read it; except where an
  // empty list is a choice of its own (MCP_IGNORED_QUERY_KEYS="" ignores no query key).
  const { env: renamed, deprecations } = oldNames(env);
  const raw = Object.fromEntries(KEYS.map((k) => [k, EMPTY_MEANS_EMPTY.has(k) || renamed[k]?.trim() !== '' ? renamed[k] : undefined]));
  const config = plainToInstance(AppConfig, raw);
  config.deprecations = deprecations;
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}=${JSON.stringify(shown(e.property, raw[e.property] ?? ''))}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const conflicts = authConflicts(config);
  if (conflicts.length > 0) throw new ConfigError(`invalid configuration:\n  ${conflicts.join('\n  ')}`);
  config.KUBE_IMPERSONATE ??= config.authEnabled;
  return config;
}

/** Settings renamed, old name to new: the old name is still read (and warned about) when the new one is unset. */
const RENAMED: Record<string, string> = { MCP_ALLOWED_HOSTS: 'ALLOWED_HOSTS' };

function oldNames(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; deprecations: string[] } {
  const renamed = { ...env };
  const deprecations: string[] = [];
  for (const [old, name] of Object.entries(RENAMED)) {
    if (env[old] === undefined || env[old].trim() === '') continue;
    if (env[name] === undefined || env[name].trim() === '') {
      renamed[name] = env[old];
      deprecations.push(`${old} is deprecated: it is read as ${name}, which the same value should be set as (${old} will be removed)`);
    } else {
      deprecations.push(`${old} is deprecated and ignored: ${name} is set and wins; drop ${old}`);
    }
  }
  return { env: renamed, deprecations };
}

/** A refused value as the message repeats it: a database URL without its password (the message goes to the log). */
export function shown(property: string, value: string): string {
  if (property !== 'DATABASE_URL') return value;
  return value.replace(/(\/\/[^:/@\s]*):[^@/\s]*@/g, '$1:***@').replace(/(password=)[^&\s]*/gi, '$1***');
}

/** The rules between settings: what each one alone cannot say. */
function authConflicts(config: AppConfig): string[] {
  const problems: string[] = [];
  if (config.OIDC_ISSUER_URL !== undefined && config.OIDC_AUDIENCE === undefined) {
    problems.push(`OIDC_AUDIENCE="": required with OIDC_ISSUER_URL=${JSON.stringify(config.OIDC_ISSUER_URL)}: set it to the audience (aud) the identity provider puts in tokens for this service, e.g. agent-manager`);
  }
  if (!config.authEnabled && !config.AUTH_DISABLED && !isLoopbackHost(config.HOST)) {
    problems.push(
      `HOST=${JSON.stringify(config.HOST)}: authentication is off (neither OIDC_ISSUER_URL nor API_TOKENS_FILE is set), so anyone who reaches this address would be admin; ` +
        'turn authentication on, listen on a loopback address (HOST=127.0.0.1), or set AUTH_DISABLED=true to serve without authentication on purpose',
    );
  }
  if (config.AGENT_CHART.startsWith('oci://') && config.AGENT_CHART_VERSION === undefined) {
    problems.push(`AGENT_CHART_VERSION="": required with AGENT_CHART=${JSON.stringify(config.AGENT_CHART)}: an OCI chart is pulled once per version, so name the version every write uses, e.g. AGENT_CHART_VERSION=0.6.0`);
  }
  if (config.METRICS_PORT !== undefined && config.METRICS_PORT === config.PORT) {
    problems.push(`METRICS_PORT="${config.METRICS_PORT}": it is PORT too; leave METRICS_PORT unset to serve /metrics on PORT, or choose another port`);
  }
  if (!config.authEnabled && config.KUBE_IMPERSONATE === true) {
    problems.push('KUBE_IMPERSONATE="true": impersonation needs authenticated callers; turn authentication on (OIDC_ISSUER_URL or API_TOKENS_FILE) or drop KUBE_IMPERSONATE');
  }
  return problems;
}
