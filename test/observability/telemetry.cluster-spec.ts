import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sha256Hex } from '@app/auth';
import { TestCluster } from '../support/cluster.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { parsePrometheusText, type PromSample } from '../support/prometheus-text.js';
import { freePort, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call } from '../support/test-app.js';
import { mcpClient } from '../support/mcp-client.js';

jest.setTimeout(300_000);

const TOKEN = 'am_obs_7c1e9a4f2b8d6e0a3c5f7b9d1e2a4c6f';
const ANNOTATION_SECRET = 'annotation-value-9f8e7d6c5b4a';
const POLICY = 'roles:\n  admin: ["*"]\nbindings:\n  - role: admin\n    subjects: ["token:obs"]\n    namespaces: ["*"]\n';
const SERVER = 2; // OTLP SpanKind
const CLIENT = 3;

/** A caller's W3C traceparent with fresh ids. */
function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = [...Array(32)].map(() => Math.floor(Math.random() * 16).toString(16)).join('');
  const spanId = [...Array(16)].map(() => Math.floor(Math.random() * 16).toString(16)).join('');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/**
 * Issue 13 items 1, 2, 3 and 6 on the built service as its own process, with authentication on,
 * against the test API server: a create, a refused write, a status read and an MCP tool call, each
 * with the caller's traceparent; then /metrics (on METRICS_PORT) parsed as Prometheus text, every
 * stdout line parsed as JSON, the token and an annotation value searched through the whole log,
 * and after SIGTERM the spans a local OTLP receiver got (the batch delay is a minute: only the
 * flush at shutdown sends them).
 */
describe('logs, metrics and traces of a running service', () => {
  let cluster: TestCluster;
  let receiver: OtlpReceiver;
  let proc: ServiceProcess | undefined;
  let dir: string;
  let ns: string;
  let metricsPort: number;
  const name = 'observed-agent';
  const create = traceparent();
  const status = traceparent();
  const tool = traceparent();
  const auth = { authorization: `Bearer ${TOKEN}` };
  let exitCode: number | null;
  let scraped: { samples: PromSample[]; types: Map<string, string> };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('obs');
    dir = mkdtempSync(join(tmpdir(), 'telemetry-'));
    writeFileSync(join(dir, 'tokens.yaml'), `- name: obs\n  sha256: ${sha256Hex(TOKEN)}\n`);
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    receiver = await OtlpReceiver.start();
    metricsPort = await freePort();
    proc = await startServiceProcess({
      DATABASE_URL: `file:${join(dir, 'store.db')}`,
      KUBECONFIG: cluster.kubeconfig,
      HELM_TIMEOUT_SECONDS: '60',
      API_TOKENS_FILE: join(dir, 'tokens.yaml'),
      AUTHZ_POLICY_FILE: join(dir, 'policy.yaml'),
      MCP_ALLOWED_HOSTS: '127.0.0.1,localhost',
      // The test API server grants token:obs nothing: helm and reads act as the service here.
      KUBE_IMPERSONATE: 'false',
      METRICS_PORT: String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '60000',
      RECONCILE_AUTOMATIC: 'false',
      // Status answers from the watches where they look; the agent here lies outside them, so its
      // status reads helm and the Kubernetes API directly (the client spans and metrics under test).
      WATCH_NAMESPACES: 'not-watched',
    });

    const body = { namespace: ns, name, modelConfig: 'default-model-config', toolset: ['preset:read-only'], annotations: { 'example.com/note': ANNOTATION_SECRET } };
    const created = await call(proc.url, 'POST', '/api/v1/agents', body, { ...auth, traceparent: create.header, 'x-request-id': 'obs-create-1' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('obs-create-1');
    expect((await call(proc.url, 'POST', '/api/v1/agents', body, auth)).status).toBe(409);
    expect((await call(proc.url, 'GET', `/api/v1/agents/${ns}/${name}/status`, undefined, { ...auth, traceparent: status.header })).status).toBe(200);

    const client = mcpClient('telemetry-e2e');
    const transport = new StreamableHTTPClientTransport(new URL(`${proc.url}/mcp`), { requestInit: { headers: auth } });
    await client.connect(transport);
    const answer = await client.callTool({ name: 'get_agent', arguments: { namespace: ns, name }, _meta: { traceparent: tool.header } });
    expect(answer.isError).toBeFalsy();

    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    scraped = parsePrometheusText(await res.text());
    await client.close();

    expect(receiver.spans).toEqual([]); // nothing sent yet: the batch waits a minute
    exitCode = await proc.stop();
  });

  afterAll(async () => {
    if (proc?.child.exitCode === null) await proc.kill();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The value of the one sample of `metric` whose labels include `labels`; undefined when there is none. */
  const value = (metric: string, labels: Record<string, string> = {}) =>
    scraped.samples.find((m) => m.name === metric && Object.entries(labels).every(([k, v]) => m.labels[k] === v))?.value;

  it('serves /metrics on METRICS_PORT only, in the Prometheus text format, with the requests, the tool call, helm, the store and the journal', async () => {
    expect((await call(proc!.url, 'GET', '/metrics').catch(() => ({ status: 0 }))).status).not.toBe(200);
    expect(scraped.types.get('agent_manager_http_request_duration_seconds')).toBe('histogram');
    expect(value('agent_manager_http_requests_total', { method: 'POST', route: '/api/v1/agents', status: '201', outcome: 'ok' })).toBe(1);
    expect(value('agent_manager_http_requests_total', { method: 'POST', route: '/api/v1/agents', status: '409', outcome: 'conflict' })).toBe(1);
    expect(value('agent_manager_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/agents', outcome: 'ok' })).toBe(1);
    expect(value('agent_manager_mcp_tool_calls_total', { tool: 'get_agent', outcome: 'ok' })).toBe(1);
    expect(value('agent_manager_mcp_tool_call_duration_seconds_count', { tool: 'get_agent', outcome: 'ok' })).toBe(1);
    expect(value('agent_manager_helm_process_duration_seconds_count', { subcommand: 'install', outcome: 'ok' })).toBe(1);
    // Both creates waited for the agent's lock: the second learns under it that the agent exists.
    expect(value('agent_manager_lease_wait_seconds_count', { outcome: 'acquired' })).toBe(2);
    expect(value('agent_manager_journal_operations', { state: 'succeeded' })).toBe(1);
    expect(value('agent_manager_kube_request_duration_seconds_count', { verb: 'get', resource: 'agents', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(value('agent_manager_store_transaction_duration_seconds_count', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(value('agent_manager_store_query_duration_seconds_count', { model: 'Agent' })).toBeGreaterThan(0);
    expect(value('agent_manager_mcp_sessions_open')).toBe(1);
    expect(value('agent_manager_helm_slots')).toBeGreaterThanOrEqual(1);
    expect(value('agent_manager_helm_queue_length')).toBe(0);
    expect(value('agent_manager_blueprint_tools_served')).toBe(0);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(0);
    // Bounded labels: no agent name, namespace or request id is a label value.
    const labelValues = scraped.samples.flatMap((m) => Object.values(m.labels));
    expect(labelValues.filter((v) => v.includes(name) || v.includes(ns) || v.includes('obs-create-1'))).toEqual([]);
  });

  it('writes JSON lines on stdout, each line of a request with its request id, trace id, subject, door, operation and agent', () => {
    const lines = readFileSync(proc!.stdout, 'utf8').split('\n').filter((l) => l.length > 0);
    expect(lines.length).toBeGreaterThan(5);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
    for (const entry of entries) expect(entry).toEqual(expect.objectContaining({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) }));

    const agent = `${ns}/${name}`;
    const access = entries.find((e) => e.msg === 'request' && e.method === 'POST' && e.status === 201);
    expect(access).toMatchObject({ route: '/api/v1/agents', outcome: 'ok', requestId: 'obs-create-1', traceId: create.traceId, subject: 'token:obs', door: 'rest', operation: 'create_agent', agent });
    expect(access!.durationMs).toEqual(expect.any(Number));
    expect(entries.find((e) => e.msg === 'request' && e.status === 409)).toMatchObject({ outcome: 'conflict', operation: 'create_agent', agent });

    const helm = entries.find((e) => e.context === 'Helm' && e.subcommand === 'install');
    expect(helm).toMatchObject({ requestId: 'obs-create-1', traceId: create.traceId, subject: 'token:obs', door: 'rest', operation: 'create_agent', agent, exitCode: 0 });
    expect(helm!.durationMs).toEqual(expect.any(Number));
    expect(helm!.args[helm!.args.indexOf('--values') + 1]).toMatch(/agent-manager-values-.*values\.json$/);

    const toolLine = entries.find((e) => e.tool === 'get_agent');
    expect(toolLine).toMatchObject({ outcome: 'ok', traceId: tool.traceId, door: 'mcp-http', subject: 'token:obs', operation: 'get_agent', agent });
    const mcpAccess = entries.filter((e) => e.msg === 'request' && e.route === '/mcp');
    expect(mcpAccess.length).toBeGreaterThan(0);
    expect(mcpAccess.every((e) => e.subject === 'token:obs' && e.door === 'mcp-http')).toBe(true);
    expect(entries.filter((e) => e.requestId === 'obs-create-1').every((e) => e.traceId === create.traceId)).toBe(true);
  });

  it('never logs the token, an Authorization header or an annotation value', () => {
    const log = readFileSync(proc!.log, 'utf8');
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(TOKEN.slice(7, 30));
    expect(log.toLowerCase()).not.toContain('bearer ');
    expect(log).not.toContain(ANNOTATION_SECRET);
  });

  it("flushes the spans on SIGTERM: the caller's traces, the request's span and helm, Kubernetes and store spans beneath it", () => {
    expect(exitCode).toBe(0);
    const spans = receiver.spans;
    const child = (of: ReceivedSpan, named: string) => spans.find((s) => s.parentSpanId === of.spanId && s.traceId === of.traceId && s.name === named);

    const post = spans.find((s) => s.traceId === create.traceId && s.parentSpanId === create.spanId);
    expect(post).toMatchObject({ name: 'POST /api/v1/agents', kind: SERVER, attributes: expect.objectContaining({ 'http.response.status_code': 201 }) });
    expect(child(post!, 'helm install')).toMatchObject({ kind: CLIENT, attributes: expect.objectContaining({ 'helm.subcommand': 'install', 'process.exit.code': 0 }) });
    expect(child(post!, 'store transaction')).toBeDefined();

    const read = spans.find((s) => s.traceId === status.traceId && s.parentSpanId === status.spanId);
    expect(read).toMatchObject({ name: 'GET /api/v1/agents/:namespace/:name/status', kind: SERVER });
    expect(child(read!, 'kube get agents')).toMatchObject({ kind: CLIENT });

    const toolCall = spans.find((s) => s.traceId === tool.traceId && s.parentSpanId === tool.spanId);
    expect(toolCall).toMatchObject({ name: 'tools/call get_agent', kind: SERVER });
    // get_agent reads the agent and its last operation in one statement: a query span, no transaction
    expect(child(toolCall!, 'store query')).toMatchObject({ kind: CLIENT, attributes: expect.objectContaining({ 'db.operation.name': '$queryRaw' }) });
  });
});
