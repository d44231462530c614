// npm test: also with helm 3 — values through each major's YAML parser and templates
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * Exact round trips through the real helm (HELM_BIN picks 3 or 4) and the real API server: a value
 * agent-manager wrote reads back the same from helm (go-yaml), from the live Agent and from the
 * store, and status never reports drift for it.
 */
jest.setTimeout(120_000);

const HOSTILE: [string, string][] = [
  ['U+2028 line separator', 'before \u2028 after'],
  ['U+2029 paragraph separator', 'before\u2029after'],
  ['both separators at the ends', '\u2028middle\u2029'],
  ['a line over 4 KiB without spaces', 'x'.repeat(5000)],
  ['a line over 4 KiB of words (go-yaml folds at 80)', 'word '.repeat(1200).trim()],
  ['yes', 'yes'],
  ['no', 'no'],
  ['on', 'on'],
  ['null', 'null'],
  ['~', '~'],
  ['0x1F', '0x1F'],
  ['0o17', '0o17'],
  ['1e3', '1e3'],
  ['-', '-'],
  ['- a', '- a'],
  [': b', ': b'],
  ['#c', '#c'],
  ["'q'", "'q'"],
  ['"dq"', '"dq"'],
  ['leading and trailing spaces', '  spaced  '],
  ['tabs', '\ta\tb\t'],
  ['CR LF', 'a\r\nb\r\n'],
  ['multi-line text with a blank line and a trailing newline', 'line one\nline two\n\n  indented\n'],
  ['emoji and astral characters', '🚀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀'],
  ['template braces', '{{ .Values }} {{- fail "x" }}'],
];

/** Label values are restricted to [-A-Za-z0-9_.]; these are the ones YAML 1.1 or 1.2 read as something else. */
const HOSTILE_LABEL_VALUES = { yes: 'yes', no: 'no', on: 'on', off: 'off', null: 'null', hex: '0x1F', oct: '0o17', exp: '1e3', true: 'True', under: '1_000', float: '1.0', inf: 'inf', nan: 'NaN' };

describe('exact round trips of hostile strings', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let helm: HelmClient;
  let ns: string;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    // The automatic reconciler is not under test here (test/lifecycle/reconciler.cluster-spec.ts is its
    // suite), and a finding of its own would race the assertions: off, as in the other cluster suites.
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('rt');
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each(HOSTILE.map(([label, value], i) => [label, value, i] as const))('%s: create → no drift, and every reader gets the same string back', async (_label, value, i) => {
    const name = `rt-${i}`;
    // Every field that takes free text, within its length limit (displayName 253, description 2,000 characters).
    const fields = {
      displayName: value.length <= 253 ? value : value.slice(0, 253),
      description: value.length <= 2000 ? value : value.slice(0, 2000),
      systemMessage: value,
      annotations: { 'example.com/text': value },
    };
    const sent = { name, namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:read-only'], ...fields };
    const created = await call(t.url, 'POST', '/api/v1/agents', sent);
    expect(created.status).toBe(201);

    const status = await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}/status`);
    expect(status.body).toMatchObject({ verdict: 'progressing', releaseStatus: 'deployed', drift: [] });

    const agent = await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}`);
    expect(agent.body.values).toMatchObject(fields);
    expect(await helm.getValues({ namespace: ns, name })).toMatchObject(fields);

    const live = await cluster.agent(ns, name);
    expect(live.metadata.annotations).toMatchObject({ 'example.com/text': value, 'agent-manager.giantswarm.io/display-name': fields.displayName });
    expect(live.spec.description).toBe(fields.description);
    expect(live.spec.declarative.systemMessage).toBe(value);
  });

  it('label values YAML would read as booleans, numbers or null: no drift, the same strings everywhere', async () => {
    const name = 'rt-labels';
    const labels = HOSTILE_LABEL_VALUES;
    const created = await call(t.url, 'POST', '/api/v1/agents', { name, namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:none'], labels });
    expect(created.status).toBe(201);
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}/status`)).body).toMatchObject({ releaseStatus: 'deployed', drift: [] });
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}`)).body.values.labels).toEqual(labels);
    expect((await cluster.agent(ns, name)).metadata.labels).toMatchObject(labels);
  });

  it('an update with every hostile string at once round-trips too', async () => {
    const annotations = Object.fromEntries(HOSTILE.map(([, value], i) => [`example.com/v${i}`, value]));
    const path = `/api/v1/agents/${ns}/rt-0`;
    const updated = await call(t.url, 'PATCH', path, { annotations, systemMessage: HOSTILE.map(([, v]) => v).join('|') });
    expect(updated.status).toBe(200);
    expect((await call(t.url, 'GET', `${path}/status`)).body).toMatchObject({ releaseStatus: 'deployed', releaseRevision: 2, drift: [] });
    expect((await call(t.url, 'GET', path)).body.values.annotations).toEqual(annotations);
    expect((await cluster.agent(ns, 'rt-0')).metadata.annotations).toMatchObject(annotations);
  });
});
