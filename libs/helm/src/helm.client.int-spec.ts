import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { AppError } from '@app/common';
import { unreachableKubeconfig } from '../../../test/support/test-app.js';
import { HelmClient } from './helm.client.js';
import { resolveHelmBinary } from './helm-binary.js';

const chart = { ref: resolve('charts/agent') };
const release = { namespace: 'agents', name: 'helm-adapter' };
const values = { modelConfig: 'm', toolset: ['preset:read-only'], description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };

describe(HelmClient.name, () => {
  const dir = mkdtempSync(join(tmpdir(), 'helm-client-'));
  const helm = new HelmClient({ bin: resolveHelmBinary(), kubeconfig: unreachableKubeconfig(dir), timeoutSeconds: 30 });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('detects the helm version once', async () => {
    const version = await helm.version();
    expect(version.version).toMatch(/^v\d+\.\d+\.\d+/);
    expect([3, 4]).toContain(version.major);
    expect(await helm.version()).toBe(version);
  });

  it('runs one `helm version` for calls that ask at once, and answers them all with it', async () => {
    const fresh = new HelmClient({ bin: resolveHelmBinary(), kubeconfig: unreachableKubeconfig(dir), timeoutSeconds: 30 });
    const [first, ...others] = await Promise.all([fresh.version(), fresh.version(), fresh.version()]);
    for (const other of others) expect(other).toBe(first);
    await fresh.close();
  });

  it('renders the chart with the values given', async () => {
    const manifests = await helm.template(release, chart, values);
    const agent = parseAllDocuments(manifests).map((d) => d.toJSON()).find((o) => o?.kind === 'Agent');
    expect(agent.metadata.name).toBe('helm-adapter');
    expect(agent.spec.declarative.tools[0].headersFrom[0].value).toBe('preset:read-only');
  });

  it('maps a chart refusal to invalid_request with the chart\'s message', async () => {
    const refused = helm.template(release, chart, { ...values, toolset: [] });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/toolset must not be empty/) });
  });

  it('maps an unreachable cluster to backend_error with helm\'s message', async () => {
    await expect(helm.upgradeInstall(release, chart, values)).rejects.toMatchObject({
      code: 'backend_error',
      message: expect.stringMatching(/cluster unreachable|connection refused/i),
    });
    await expect(helm.status(release)).rejects.toMatchObject({ code: 'backend_error' });
  });

  it('says backend_error naming the binary when helm cannot be run', async () => {
    const missing = new HelmClient({ bin: join(dir, 'no-such-helm'), timeoutSeconds: 5 });
    await expect(missing.version()).rejects.toMatchObject({ code: 'backend_error', message: expect.stringContaining('no-such-helm') });
  });

  it('removes values folders left by a killed run, and only old ones', async () => {
    const { mkdirSync, utimesSync, existsSync } = await import('node:fs');
    const stale = join(tmpdir(), 'agent-manager-values-stale-test');
    const fresh = join(tmpdir(), 'agent-manager-values-fresh-test');
    mkdirSync(stale, { recursive: true });
    mkdirSync(fresh, { recursive: true });
    const old = new Date(Date.now() - 3600_000);
    utimesSync(stale, old, old);
    try {
      expect(await helm.removeStaleValues()).toBeGreaterThanOrEqual(1);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(fresh)).toBe(true);
    } finally {
      rmSync(stale, { recursive: true, force: true });
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

describe(`${HelmClient.name} process pool`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'helm-pool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the real helm one at a time with HELM_CONCURRENCY=1 and refuses a call that cannot get a slot in time with 503', async () => {
    const helm = new HelmClient({ bin: resolveHelmBinary(), kubeconfig: unreachableKubeconfig(dir), timeoutSeconds: 30, concurrency: 1, queueSeconds: 0 });
    const results = await Promise.allSettled([helm.template(release, chart, values), helm.template(release, chart, values)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'unavailable', retryAfterSeconds: 1 });
    expect(helm.poolStats).toMatchObject({ concurrency: 1, inUse: 0, queued: 0, refused: 1 });
    await expect(helm.template(release, chart, values)).resolves.toContain('kind: Agent');
  });
});
