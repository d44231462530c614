import { afterAll, describe, expect, it } from '@jest/globals';
import { AppError } from '@app/common';
import { ManifestReader } from './manifest-reader.js';

/** A manifest shaped like the agent chart's, with `labels` extra labels (the 50,000 blocked the loop 27 s). */
function manifest(labels: number, systemMessage = 'hi'): string {
  const extra = Array.from({ length: labels }, (_, i) => `    k${i}: v${i}`).join('\n');
  return [
    '---',
    '# Source: agent/templates/agent.yaml',
    'apiVersion: kagent.dev/v1alpha2',
    'kind: Agent',
    'metadata:',
    '  name: "a"',
    '  namespace: "n"',
    '  labels:',
    '    app.kubernetes.io/name: agent',
    extra,
    '  annotations:',
    '    agent-manager.giantswarm.io/display-name: "x\\L y"',
    'spec:',
    '  type: Declarative',
    '  declarative:',
    `    systemMessage: ${JSON.stringify(systemMessage)}`,
    '    modelConfig: "m"',
    '',
  ].join('\n');
}

describe(ManifestReader.name, () => {
  const reader = new ManifestReader();
  afterAll(() => reader.close());

  it('finds the Agent, reading YAML escapes as go-yaml writes them (\\L is U+2028)', async () => {
    const agent = await reader.agentIn(`---\n# Source: other.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n${manifest(0, 'a\u2029b')}`);
    expect(agent?.metadata.annotations).toEqual({ 'agent-manager.giantswarm.io/display-name': 'x\u2028 y' });
    expect(agent?.spec).toEqual({ type: 'Declarative', declarative: { systemMessage: 'a\u2029b', modelConfig: 'm' } });
  });

  it('answers null for a manifest without an Agent, or an empty one', async () => {
    await expect(reader.agentIn('---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n')).resolves.toBeNull();
    await expect(reader.agentIn('')).resolves.toBeNull();
  });

  it('parses off the main thread: timers keep firing while a large manifest is read', async () => {
    const parsed = reader.agentIn(manifest(5_000)).then(() => 'parsed');
    const timer = new Promise((resolve) => setTimeout(() => resolve('timer'), 0));
    await expect(Promise.race([parsed, timer])).resolves.toBe('timer');
    const agent = await reader.agentIn(manifest(5_000));
    expect(Object.keys(agent?.metadata.labels ?? {})).toHaveLength(5_001);
  });

  it('gives up on a parse that takes longer than its limit, with a backend error', async () => {
    const impatient = new ManifestReader(1);
    try {
      await expect(impatient.agentIn(manifest(20_000))).rejects.toMatchObject({ code: 'backend_error', message: expect.stringMatching(/took longer than 0.001s/) });
    } finally {
      await impatient.close();
    }
  });

  it('fails pending reads when closed, and starts a new worker on the next read', async () => {
    const pending = reader.agentIn(manifest(2_000));
    await reader.close();
    await expect(pending).rejects.toBeInstanceOf(AppError);
    await expect(reader.agentIn(manifest(0))).resolves.toMatchObject({ kind: 'Agent' });
  });

  it('an idle reader nobody closed does not keep the process running (a jest run waited for good on its worker)', async () => {
    // Node lists only the handles that keep the process running.
    const holding = () => (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles().filter((h) => h.constructor.name === 'MessagePort').length;
    const before = holding();
    const unclosed = new ManifestReader();
    await expect(unclosed.agentIn(manifest(0))).resolves.toMatchObject({ kind: 'Agent' });
    expect(holding()).toBe(before);
    await unclosed.close();
  });

  it('refuses a manifest that is not YAML as a backend error', async () => {
    await expect(reader.agentIn('a: [unclosed\n')).rejects.toMatchObject({ code: 'backend_error', message: expect.stringMatching(/not valid YAML/) });
    await expect(reader.agentIn(manifest(0))).resolves.toMatchObject({ kind: 'Agent' });
  });
});
