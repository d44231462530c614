import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, isLoopbackHost, loadConfig } from './app-config.js';
import { PROJECT_ROOT } from './project-root.js';

describe('loadConfig', () => {
  it('applies the embedded defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 8080, HOST: '127.0.0.1', DATABASE_URL: `file:${join(PROJECT_ROOT, 'data', 'agent-manager.db')}`, AGENT_CHART: 'charts/agent', LOG_LEVEL: 'log' });
    expect(config.storeProvider).toBe('sqlite');
  });

  it('finds the project\'s own chart and store from any working directory', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'agent-manager-cwd-'));
    const cwd = process.cwd();
    try {
      process.chdir(elsewhere);
      const config = loadConfig({});
      expect(config.chartRef).toBe(join(PROJECT_ROOT, 'charts', 'agent'));
      expect(config.DATABASE_URL).toBe(`file:${join(PROJECT_ROOT, 'data', 'agent-manager.db')}`);
      expect(loadConfig({ AGENT_CHART: './mine' }).chartRef).toBe(join(realpathSync(elsewhere), 'mine'));
    } finally {
      process.chdir(cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('takes an oci:// AGENT_CHART only with its version, and pulls over https unless told plain http', () => {
    expect(() => loadConfig({ AGENT_CHART: 'oci://registry.example.com/charts/agent' })).toThrow(/AGENT_CHART_VERSION="": required with AGENT_CHART="oci:\/\/registry.example.com\/charts\/agent"/);
    const config = loadConfig({ AGENT_CHART: 'oci://registry.example.com/charts/agent', AGENT_CHART_VERSION: '0.6.1' });
    expect(config.agentChart).toEqual({ ref: 'oci://registry.example.com/charts/agent', version: '0.6.1' });
    expect(config.AGENT_CHART_PLAIN_HTTP).toBe(false);
    expect(loadConfig({ AGENT_CHART_PLAIN_HTTP: 'true' }).AGENT_CHART_PLAIN_HTTP).toBe(true);
    expect(() => loadConfig({ AGENT_CHART_PLAIN_HTTP: 'yes' })).toThrow(/AGENT_CHART_PLAIN_HTTP must be true or false/);
  });

  it('refuses a REPLICA_ID that takes the recovery sweeps\' prefix', () => {
    expect(() => loadConfig({ REPLICA_ID: 'recovery@a' })).toThrow(/REPLICA_ID=/);
  });

  it('reads PostgreSQL from DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db:5432/am' }).storeProvider).toBe('postgresql');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'file::memory:'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_FORMAT', 'xml'],
    ['METRICS_PORT', 'nine'],
    ['METRICS_PORT', '8080'],
    ['HELM_TIMEOUT_SECONDS', '0'],
    ['PORT', '0x1F90'],
    ['HELM_TIMEOUT_SECONDS', '1e3'],
    ['IDEMPOTENCY_TTL_SECONDS', '1e300'],
    ['IDEMPOTENCY_TTL_SECONDS', '2592001'],
    ['JOURNAL_RETENTION_DAYS', '-1'],
    ['JOURNAL_RETENTION_DAYS', 'ninety'],
    ['JOURNAL_RETENTION_DAYS', '36501'],
  ])('stops at start naming %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it('keeps the journal 90 days unless JOURNAL_RETENTION_DAYS says otherwise (0: forever)', () => {
    expect(loadConfig({}).JOURNAL_RETENTION_DAYS).toBe(90);
    expect(loadConfig({ JOURNAL_RETENTION_DAYS: '0' }).JOURNAL_RETENTION_DAYS).toBe(0);
    expect(loadConfig({ JOURNAL_RETENTION_DAYS: '7' }).JOURNAL_RETENTION_DAYS).toBe(7);
  });

  it('reads ALLOWED_HOSTS, and the old MCP_ALLOWED_HOSTS as its alias with a deprecation warning', () => {
    expect(loadConfig({})).toMatchObject({ ALLOWED_HOSTS: ['localhost', '127.0.0.1', '[::1]'], deprecations: [] });
    expect(loadConfig({ ALLOWED_HOSTS: 'agents.example.com' })).toMatchObject({ ALLOWED_HOSTS: ['agents.example.com'], deprecations: [] });
    const aliased = loadConfig({ MCP_ALLOWED_HOSTS: 'old.example.com' });
    expect(aliased.ALLOWED_HOSTS).toEqual(['old.example.com']);
    expect(aliased.deprecations).toEqual([expect.stringMatching(/^MCP_ALLOWED_HOSTS is deprecated: it is read as ALLOWED_HOSTS/)]);
    const both = loadConfig({ MCP_ALLOWED_HOSTS: 'old.example.com', ALLOWED_HOSTS: 'new.example.com' });
    expect(both.ALLOWED_HOSTS).toEqual(['new.example.com']);
    expect(both.deprecations).toEqual([expect.stringMatching(/^MCP_ALLOWED_HOSTS is deprecated and ignored: ALLOWED_HOSTS is set/)]);
    expect(() => loadConfig({ MCP_ALLOWED_HOSTS: 'http://old.example.com' })).toThrow(/ALLOWED_HOSTS="http:\/\/old.example.com": ALLOWED_HOSTS must be host names/);
  });

  it('applies the auth and hardening defaults: auth off, loopback, no CORS', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      OIDC_USERNAME_CLAIM: 'sub',
      OIDC_GROUPS_CLAIM: 'groups',
      AUTH_DISABLED: false,
      KUBE_IMPERSONATE: false,
      CORS_ORIGINS: [],
      MCP_SESSION_IDLE_SECONDS: 900,
      MCP_SESSIONS_PER_PRINCIPAL: 50,
      MCP_CONFIRM_DESTRUCTIVE: true,
      BODY_LIMIT_BYTES: 1_048_576,
    });
    expect(config.authEnabled).toBe(false);
    expect(config.AUTH_STDIO_SUBJECT).toMatch(/^local:\S+$/);
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
  });

  it('turns auth on with an issuer and its audience, and impersonation with it', () => {
    const config = loadConfig({ OIDC_ISSUER_URL: 'https://dex.example.com/', OIDC_AUDIENCE: 'agent-manager', HOST: '0.0.0.0' });
    expect(config.authEnabled).toBe(true);
    expect(config.KUBE_IMPERSONATE).toBe(true);
    expect(loadConfig({ API_TOKENS_FILE: '/etc/am/tokens.yaml', KUBE_IMPERSONATE: 'false' }).KUBE_IMPERSONATE).toBe(false);
  });

  it('refuses an issuer without an audience, naming OIDC_AUDIENCE', () => {
    expect(() => loadConfig({ OIDC_ISSUER_URL: 'https://dex.example.com' })).toThrow(/OIDC_AUDIENCE="": required with OIDC_ISSUER_URL/);
  });

  it('refuses to serve without auth on a non-loopback HOST, naming HOST and AUTH_DISABLED', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(/HOST="0\.0\.0\.0": authentication is off .*AUTH_DISABLED=true/);
    expect(loadConfig({ HOST: '0.0.0.0', AUTH_DISABLED: 'true' }).AUTH_DISABLED).toBe(true);
    expect(loadConfig({ HOST: '::1' }).publicUrl).toBe('http://[::1]:8080');
  });

  it('refuses impersonation without authentication', () => {
    expect(() => loadConfig({ KUBE_IMPERSONATE: 'true' })).toThrow(/KUBE_IMPERSONATE="true": impersonation needs authenticated callers/);
  });

  it('takes an AUTH_STDIO_SUBJECT of its own (local:, or a plain name) and says why token: is refused', () => {
    expect(loadConfig({ AUTH_STDIO_SUBJECT: 'Local:alice' }).AUTH_STDIO_SUBJECT).toBe('Local:alice');
    expect(loadConfig({ AUTH_STDIO_SUBJECT: 'alice' }).AUTH_STDIO_SUBJECT).toBe('alice');
    expect(() => loadConfig({ AUTH_STDIO_SUBJECT: 'Token:admin' })).toThrow(/AUTH_STDIO_SUBJECT takes "token:", which names the service's other principals/);
  });

  it('takes PUBLIC_URL without its trailing slash and CORS origins as a list', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://am.example.com/', CORS_ORIGINS: 'https://a.example.com, http://localhost:3000' });
    expect(config.publicUrl).toBe('https://am.example.com');
    expect(config.CORS_ORIGINS).toEqual(['https://a.example.com', 'http://localhost:3000']);
  });

  it.each([
    ['OIDC_ISSUER_URL', 'http://dex.example.com'],
    ['OIDC_ISSUER_URL', 'https://dex.example.com/?x=1'],
    ['OIDC_USERNAME_CLAIM', 'has space'],
    ['OIDC_GROUPS_CLAIM', '.groups'],
    ['AUTH_DISABLED', 'yes'],
    ['AUTH_STDIO_SUBJECT', 'local: alice'],
    ['AUTH_STDIO_SUBJECT', 'token:admin'],
    ['AUTH_STDIO_SUBJECT', 'Token:admin'],
    ['AUTH_STDIO_SUBJECT', 'ｔｏｋｅｎ:admin'],
    ['AUTH_STDIO_SUBJECT', 'system:masters'],
    ['AUTH_STDIO_SUBJECT', 'ANONYMOUS'],
    ['PUBLIC_URL', 'am.example.com'],
    ['KUBE_IMPERSONATE', '1'],
    ['CORS_ORIGINS', 'https://a.example.com/path'],
    ['CORS_ORIGINS', '*'],
    ['MCP_SESSION_IDLE_SECONDS', '0'],
    ['MCP_SESSIONS_PER_PRINCIPAL', 'many'],
    ['MCP_CONFIRM_DESTRUCTIVE', 'yes'],
    ['BODY_LIMIT_BYTES', '10'],
  ])('stops at start naming the auth setting %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });
});

describe(isLoopbackHost.name, () => {
  it.each([
    ['127.0.0.1', true],
    ['127.10.20.30', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['128.0.0.1', false],
    ['example.com', false],
    ['localhost.example.com', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it('never repeats a database password in the message of a refused DATABASE_URL', () => {
    const refused = () => loadConfig({ DATABASE_URL: 'jdbc:postgresql://admin:S3cretPw@db.internal:5432/agents?password=Other9' });
    expect(refused).toThrow(/DATABASE_URL="jdbc:postgresql:\/\/admin:\*\*\*@db\.internal:5432\/agents\?password=\*\*\*"/);
    expect(refused).not.toThrow(/S3cretPw|Other9/);
  });

  it('reads a variable set to nothing or blanks as unset, but keeps an empty MCP_IGNORED_QUERY_KEYS (ignore none)', () => {
    const config = loadConfig({ PORT: ' ', LOG_FORMAT: '', OIDC_ISSUER_URL: '', HELM_TIMEOUT_SECONDS: '  ', MCP_IGNORED_QUERY_KEYS: '' });
    expect(config).toMatchObject({ PORT: 8080, LOG_FORMAT: undefined, OIDC_ISSUER_URL: undefined, HELM_TIMEOUT_SECONDS: 300, MCP_IGNORED_QUERY_KEYS: [] });
    expect(loadConfig({}).MCP_IGNORED_QUERY_KEYS).toEqual(['scopes']);
  });
});
