// npm test: also with helm 3 — helm pull of an OCI chart (--plain-http, --untar) and its error texts differ by major
// npm test: also on PostgreSQL — list_agents?chartVersion= and chartName= are store queries (the label branch by id)
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { AppError } from '@app/common';
import { ChartSources, HelmClient, resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * AGENT_CHART as an oci:// reference, against a real registry on loopback (Debian's docker-registry,
 * which CI installs: .ci/run) and charts pushed there with the real helm: the chart is pulled once per
 * version and every write records it; with the registry down the bundled chart stands in (said in a
 * warning, shown by get_info) until the registry answers again; a chart a caller names (a rollout's
 * target) never falls back.
 */
jest.setTimeout(240_000);

const REGISTRY_BIN = '/usr/bin/docker-registry';
const run = promisify(execFile);
const helmBin = process.env.HELM_BIN ?? resolveHelmBinary();
const BUNDLED_VERSION = /^version:\s*(\S+)/m.exec(readFileSync(join(process.cwd(), 'charts', 'agent', 'Chart.yaml'), 'utf8'))![1];

/** Debian's docker-registry serving `dir` on 127.0.0.1:`port`, until stop(). */
class LoopbackRegistry {
  private child: ChildProcess | undefined;

  constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  async start(): Promise<void> {
    const config = join(this.dir, 'config.yml');
    writeFileSync(config, ['version: 0.1', 'log:', '  level: error', '  accesslog:', '    disabled: true', 'storage:', '  filesystem:', `    rootdirectory: ${join(this.dir, 'data')}`, 'http:', `  addr: 127.0.0.1:${this.port}`, ''].join('\n'));
    const child = spawn(REGISTRY_BIN, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.child = child;
    for (let tries = 0; ; tries++) {
      if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}: ${stderr}`);
      const answer = await fetch(`http://127.0.0.1:${this.port}/v2/`).catch(() => null);
      if (answer?.status === 200) return;
      if (tries > 200) throw new Error(`docker-registry did not answer on 127.0.0.1:${this.port}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** charts/agent as version `version`, packaged and pushed to the registry with the real helm. */
async function pushChart(dir: string, port: number, version: string): Promise<void> {
  const copy = join(dir, `agent-src-${version}`, 'agent');
  cpSync(join(process.cwd(), 'charts', 'agent'), copy, { recursive: true });
  const chartYaml = join(copy, 'Chart.yaml');
  writeFileSync(chartYaml, readFileSync(chartYaml, 'utf8').replace(/^version:.*$/m, `version: ${version}`));
  await run(helmBin, ['package', copy, '--destination', dir]);
  await run(helmBin, ['push', join(dir, `agent-${version}.tgz`), `oci://127.0.0.1:${port}/charts`, '--plain-http']);
}

describe('AGENT_CHART from an OCI registry on loopback', () => {
  const cluster = TestCluster.fromEnv();
  let dir: string;
  let registry: LoopbackRegistry;
  let reference: string;
  let ns: string;
  const create = (name: string) => ({ name, namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:read-only'], systemMessage: 'You help.' });
  const helm = new HelmClient({ bin: helmBin, kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
  /** The chart of the release's current revision, as helm itself reports it (name-version). */
  const releasedChart = async (name: string) => (await helm.history({ namespace: ns, name })).at(-1)?.chart;
  const ociSettings = (cache: string) => ({
    KUBECONFIG: cluster.kubeconfig,
    HELM_TIMEOUT_SECONDS: '60',
    RECONCILE_AUTOMATIC: 'false',
    AGENT_CHART: reference,
    AGENT_CHART_VERSION: '0.6.1',
    AGENT_CHART_PLAIN_HTTP: 'true',
    AGENT_CHART_CACHE_DIR: join(dir, cache),
  });

  beforeAll(async () => {
    // Not skipped when missing: CI installs it (.ci/run), and a machine without it should say so.
    if (!existsSync(REGISTRY_BIN)) throw new Error(`${REGISTRY_BIN} is missing: install Debian's docker-registry package (apt-get install docker-registry), as .ci/run does`);
    dir = mkdtempSync(join(tmpdir(), 'agent-manager-oci-'));
    registry = new LoopbackRegistry(dir, await freePort());
    await registry.start();
    reference = `oci://127.0.0.1:${registry.port}/charts/agent`;
    await pushChart(dir, registry.port, '0.6.1');
    ns = await cluster.freshNamespace('oci');
  });

  afterAll(async () => {
    await registry?.stop();
    await helm.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('while the registry answers, then once it is gone', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp(ociSettings('cache-a'));
    });

    afterAll(async () => {
      await t?.close();
    });

    it('pulls the configured chart once and records the version it installed; list_agents?chartVersion= finds the agent', async () => {
      const created = await call(t.url, 'POST', '/api/v1/agents', create('from-oci'));
      expect(created.status).toBe(201);
      expect(created.body.agent.chart).toEqual({ name: 'agent', version: '0.6.1' });
      expect(await releasedChart('from-oci')).toBe('agent-0.6.1');
      // Pulled into the cache, one folder for the (reference, version).
      expect(readdirSync(join(dir, 'cache-a')).filter((entry) => !entry.startsWith('.'))).toHaveLength(1);

      const listed = await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&chartVersion=0.6.1`);
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((agent: { name: string }) => agent.name)).toEqual(['from-oci']);
      expect(listed.body.items[0].chart).toEqual({ name: 'agent', version: '0.6.1' });
      const older = await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&chartVersion=${BUNDLED_VERSION}`);
      expect(older.body.items).toEqual([]);
      expect((await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&chartName=agent&chartVersion=0.6.1`)).body.items).toHaveLength(1);
      expect((await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&chartName=another-chart`)).body.items).toEqual([]);

      const info = await call(t.url, 'GET', '/api/v1/info');
      expect(info.body.chart).toMatchObject({ ref: reference, version: '0.6.1', inEffect: { ref: reference, name: 'agent', version: '0.6.1' }, fallback: null });
      expect(info.body.chart.valuesSchemaDigest).toMatch(/^sha256:/);
    });

    it('refuses a chartVersion that is not a version, naming the parameter', async () => {
      const res = await call(t.url, 'GET', '/api/v1/agents?chartVersion=latest');
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/chartVersion must be a semantic version/);
    });

    it('writes on with the pulled chart once the registry is gone: no pull per write', async () => {
      await registry.stop();
      const updated = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/from-oci`, { systemMessage: 'You help more.' });
      expect(updated.status).toBe(200);
      expect(updated.body.after.systemMessage).toBe('You help more.');
      expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/from-oci`)).body.chart).toEqual({ name: 'agent', version: '0.6.1' });
      expect(await releasedChart('from-oci')).toBe('agent-0.6.1');
    });
  });

  describe('with the registry down from the start', () => {
    let t: TestApp;
    let warn: jest.Spied<Logger['warn']>;
    const fallbackWarnings = () => warn.mock.calls.map((args: unknown[]) => String(args[0])).filter((message: string) => message.includes('bundled chart'));

    beforeAll(async () => {
      await registry.stop();
      warn = jest.spyOn(Logger.prototype, 'warn');
      t = await startTestApp(ociSettings('cache-b'));
    });

    afterAll(async () => {
      warn?.mockRestore();
      await t?.close();
    });

    it('writes with the bundled chart, says so once per attempt, and get_info shows which chart is in effect and why', async () => {
      const first = await call(t.url, 'POST', '/api/v1/agents', create('fallback-one'));
      expect(first.status).toBe(201);
      expect(first.body.agent.chart).toEqual({ name: 'agent', version: BUNDLED_VERSION });
      expect(await releasedChart('fallback-one')).toBe(`agent-${BUNDLED_VERSION}`);
      expect(fallbackWarnings()).toHaveLength(1);
      expect(fallbackWarnings()[0]).toContain(`AGENT_CHART ${reference} version 0.6.1 cannot be pulled`);
      expect(fallbackWarnings()[0]).toMatch(/connection refused/);

      // Within the retry interval the next write does not try the registry again: no second warning.
      const second = await call(t.url, 'POST', '/api/v1/agents', create('fallback-two'));
      expect(second.status).toBe(201);
      expect(second.body.agent.chart.version).toBe(BUNDLED_VERSION);
      expect(fallbackWarnings()).toHaveLength(1);

      const info = await call(t.url, 'GET', '/api/v1/info');
      expect(info.body.chart).toMatchObject({ ref: reference, version: '0.6.1', inEffect: { name: 'agent', version: BUNDLED_VERSION } });
      expect(info.body.chart.inEffect.ref).toMatch(/charts\/agent$/);
      expect(info.body.chart.fallback.reason).toMatch(/connection refused/);
      const listed = await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&chartVersion=${BUNDLED_VERSION}`);
      expect(listed.body.items.map((agent: { name: string }) => agent.name)).toEqual(['fallback-one', 'fallback-two']);
    });

    it('refuses a named chart (a rollout target) it cannot pull, naming the reference: no fallback', async () => {
      const charts = t.app.get(ChartSources);
      const refused = await charts.resolve(reference, '0.6.1').then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({ code: 'unavailable', status: 503 });
      expect((refused as AppError).message).toContain(`chart ${reference} version 0.6.1 cannot be pulled, the registry cannot be reached`);
      await expect(charts.resolve(reference)).rejects.toMatchObject({ code: 'unavailable' });
      await expect(charts.resolve('oci://127.0.0.1:1/charts/agent')).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('needs a version') });
    });

    it('takes the configured chart again on the first write after the retry interval once the registry answers', async () => {
      await registry.start();
      t.clock.advance(61_000);
      const updated = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/fallback-one`, { systemMessage: 'Back on the registry chart.' });
      expect(updated.status).toBe(200);
      expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/fallback-one`)).body.chart).toEqual({ name: 'agent', version: '0.6.1' });
      expect(await releasedChart('fallback-one')).toBe('agent-0.6.1');
      expect((await call(t.url, 'GET', '/api/v1/info')).body.chart).toMatchObject({ inEffect: { ref: reference, version: '0.6.1' }, fallback: null });
      expect(fallbackWarnings()).toHaveLength(1);
    });

    it('resolves a named chart from the registry, and refuses a version the registry does not have', async () => {
      const charts = t.app.get(ChartSources);
      await pushChart(dir, registry.port, '0.6.2');
      const target = await charts.resolve(reference, '0.6.2');
      expect(target).toMatchObject({ source: reference, name: 'agent', chartVersion: '0.6.2' });
      expect(existsSync(join(target.ref, 'Chart.yaml'))).toBe(true);
      await expect(charts.resolve(reference, '9.9.9')).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining(`chart ${reference} version 9.9.9: the registry has no such chart`) });
    });
  });
});
