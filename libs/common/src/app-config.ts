import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import { ArrayMinSize, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';

import { PROJECT_ROOT } from './project-root.js';

export const LOG_LEVELS = ['error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The service's settings, read once from the environment and validated at start. */
export class AppConfig {
  @Transform(({ value }) => (value === undefined || value === '' ? 8080 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number;

  @Transform(({ value }) => (value === undefined || value === '' ? '0.0.0.0' : value))
  @IsString()
  @MinLength(1)
  HOST: string;

  @Transform(({ value }) => (value === undefined || value === '' ? `file:${join(PROJECT_ROOT, 'data', 'agent-manager.db')}` : value))
  @Matches(/^(file:.+|postgres(ql)?:\/\/.+)$/, {
    message: 'DATABASE_URL must be file:<path> (SQLite) or postgresql://… (PostgreSQL)',
  })
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

  @Transform(({ value }) => (value === undefined || value === '' ? 'log' : value))
  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel;

  @Transform(({ value }) => (value === undefined || value === '' ? 300 : Number(value)))
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
   * Host names (any port) that /mcp answers, against DNS rebinding: a request whose Host or Origin
   * names another host is refused with 403. `*` allows any (behind an ingress that checks Host).
   */
  @Transform(({ value }) => commaList(value === undefined || value === '' ? 'localhost,127.0.0.1,[::1]' : value))
  @ArrayMinSize(1, { message: 'MCP_ALLOWED_HOSTS must name at least one host, e.g. localhost,127.0.0.1,[::1], or * for any' })
  @Matches(/^(\*|\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?)$/, {
    each: true,
    message: 'MCP_ALLOWED_HOSTS must be host names without port or scheme, comma-separated (IPv6 in brackets: [::1]), or *',
  })
  MCP_ALLOWED_HOSTS: string[];

  /** How long a replica's lock on one agent lasts without renewal; a dead replica's lock is taken over after it. */
  @Transform(({ value }) => (value === undefined || value === '' ? 30 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(3600)
  LEASE_TTL_SECONDS: number;

  /**
   * How long a write waits in line for another write on the same agent (any replica) before it
   * is refused with 409; writes to one agent are applied one after another in arrival order.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 30 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(3600)
  WRITE_QUEUE_SECONDS: number;

  /** How long a write's Idempotency-Key (requestId on MCP) answers retries with the first answer. */
  @Transform(({ value }) => (value === undefined || value === '' ? 86_400 : Number(value)))
  @IsInt()
  @Min(1)
  IDEMPOTENCY_TTL_SECONDS: number;

  /** On SIGTERM: how long running writes may take to finish before the store closes. */
  @Transform(({ value }) => (value === undefined || value === '' ? 60 : Number(value)))
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

  /** At most this many helm processes at once (writes keep one slot for themselves); default twice the cores. */
  @Transform(({ value }) => (value === undefined || value === '' ? 2 * availableParallelism() : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1024)
  HELM_CONCURRENCY: number;

  /** How long a call waits for a free helm process before it is refused with 503 and Retry-After. */
  @Transform(({ value }) => (value === undefined || value === '' ? 10 : Number(value)))
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

function commaList(value: unknown): string[] {
  return String(value)
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const KEYS = ['PORT', 'HOST', 'DATABASE_URL', 'KUBECONFIG', 'HELM_BIN', 'AGENT_CHART', 'AGENT_CHART_VERSION', 'LOG_LEVEL', 'HELM_TIMEOUT_SECONDS', 'MCP_DEFAULT_TOOLSETS', 'MCP_IGNORED_QUERY_KEYS', 'MCP_ALLOWED_HOSTS', 'LEASE_TTL_SECONDS', 'WRITE_QUEUE_SECONDS', 'IDEMPOTENCY_TTL_SECONDS', 'SHUTDOWN_TIMEOUT_SECONDS', 'REPLICA_ID', 'HELM_CONCURRENCY', 'HELM_QUEUE_SECONDS'];

/** Reads and validates the environment; throws a ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const raw = Object.fromEntries(KEYS.map((k) => [k, env[k]]));
  const config = plainToInstance(AppConfig, raw);
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}=${JSON.stringify(raw[e.property] ?? '')}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return config;
}
