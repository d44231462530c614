import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { TestCluster } from '../support/cluster.js';

jest.setTimeout(120_000);

const configYaml = (presets: Record<string, string>): string =>
  ['toolsetPresets:', ...Object.entries(presets).flatMap(([name, description]) => [`  ${name}:`, `    description: ${description}`, '    include:', '      - server: grafana'])].join('\n') + '\n';

/** Waits until `check` holds (a ceiling for a hang, not a timing target). */
async function until<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`never saw ${what}: ${JSON.stringify(value)}`);
  }
}

/**
 * MUSTER_PRESETS=configmap:<namespace>/<name>: Muster's ConfigMap on the real API server, read
 * at start and watched, so a changed ConfigMap changes the presets a write may name.
 */
describe('toolset presets from Muster\'s ConfigMap', () => {
  let cluster: TestCluster;
  let namespace: string;
  let service: TestApp;
  const names = async () => (await call(service.url, 'GET', '/api/v1/toolset-presets')).body as { presets: { name: string; description: string; source: string }[]; source: { loaded: boolean; errors: string[] } };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    namespace = await cluster.freshNamespace('muster');
    await cluster.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'muster' }, data: { 'config.yaml': configYaml({ ops: 'Operations' }) } } });
    // another ConfigMap in the namespace is not read
    await cluster.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'other' }, data: { 'config.yaml': configYaml({ elsewhere: 'Not ours' }) } } });
    service = await startTestApp({ KUBECONFIG: cluster.kubeconfig, MUSTER_PRESETS: `configmap:${namespace}/muster` });
  });

  afterAll(async () => {
    await service?.close();
  });

  it('lists the presets the ConfigMap holds, and refuses a write naming one it lacks', async () => {
    const list = await until('the ConfigMap read', names, (body) => body.source.loaded);
    expect(list.presets.filter((preset) => preset.source === 'configured')).toEqual([{ name: 'ops', description: 'Operations', source: 'configured' }]);
    const refused = await call(service.url, 'POST', '/api/v1/agents/validate', { namespace, name: 'a', modelConfig: 'm', toolset: ['preset:opss'] });
    expect(refused.body.violations).toEqual([
      { path: 'toolset[0]', message: 'toolset [preset:opss] names unknown preset "opss"; known presets: read-only, none, full, ops; did you mean "preset:ops"? Preset names are exact' },
    ]);
  });

  it('sees a change of the ConfigMap, and keeps the last good presets when a change breaks the rules', async () => {
    await cluster.core.replaceNamespacedConfigMap({ name: 'muster', namespace, body: { metadata: { name: 'muster' }, data: { 'config.yaml': configYaml({ ops: 'Operations', release: 'Release tools' }) } } });
    const changed = await until('the new preset', names, (body) => body.presets.some((preset) => preset.name === 'release'));
    expect(changed.presets.map((preset) => preset.name)).toEqual(['read-only', 'none', 'full', 'ops', 'release']);
    const accepted = await call(service.url, 'POST', '/api/v1/agents/validate', { namespace, name: 'a', modelConfig: 'm', toolset: ['preset:release'] });
    expect(accepted.body.violations).toEqual([]);

    await cluster.core.replaceNamespacedConfigMap({ name: 'muster', namespace, body: { metadata: { name: 'muster' }, data: { 'config.yaml': 'toolsetPresets:\n  none: {}\n' } } });
    const refused = await until('the refused read', names, (body) => body.source.errors.length > 0);
    expect(refused.source.errors).toEqual(['toolsetPresets: preset "none" is built in and cannot be redefined']);
    expect(refused.presets.map((preset) => preset.name)).toEqual(['read-only', 'none', 'full', 'ops', 'release']);
  });
});
