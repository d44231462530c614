import { describe, expect, it } from '@jest/globals';
import { comparableObjects, specOfLive, type AgentObject } from './live-spec.js';

/** A 0.x Agent as the chart renders it and helm applies it (helm's own annotations included). */
const agent = (edit: (a: any) => void = () => undefined): AgentObject => {
  const a: any = {
    apiVersion: 'kagent.dev/v1alpha2',
    kind: 'Agent',
    metadata: {
      name: 'helper',
      namespace: 'agents',
      labels: { 'app.kubernetes.io/name': 'agent', 'app.kubernetes.io/instance': 'helper', 'app.kubernetes.io/managed-by': 'Helm', 'helm.sh/chart': 'agent-0.6.0', team: 'sre' },
      annotations: { 'agent-manager.giantswarm.io/display-name': 'Helper', 'meta.helm.sh/release-name': 'helper', 'example.com/note': 'n' },
    },
    spec: {
      type: 'Declarative',
      description: 'Helps.',
      declarative: {
        systemMessage: 'You help.',
        modelConfig: 'default-model-config',
        tools: [{ type: 'McpServer', mcpServer: { kind: 'RemoteMCPServer', name: 'muster' }, headersFrom: [{ name: 'X-Muster-Toolset', value: 'preset:read-only,workflow:triage' }] }],
      },
    },
  };
  edit(a);
  return a;
};

/** A 1.x AgentTemplate as the API server holds it (no apiVersion/kind: readLive shows it as an Agent). */
const template: AgentObject = {
  metadata: { name: 'helper', namespace: 'agents', labels: { 'app.kubernetes.io/component': 'agent', team: 'sre' }, annotations: {} },
  spec: { modelConfig: { name: 'large' }, systemPrompt: 'You help.', tools: [{ mcp: { server: { kind: 'RemoteMCPServer', name: 'helper-muster' } } }] },
};

describe('specOfLive', () => {
  it.each<[string, AgentObject, object]>([
    ['a 0.x Agent: every field the chart writes, without the charts\' and helm\'s own labels and annotations', agent(), {
      modelConfig: 'default-model-config',
      toolset: ['preset:read-only', 'workflow:triage'],
      description: 'Helps.',
      displayName: 'Helper',
      systemMessage: 'You help.',
      labels: { team: 'sre' },
      annotations: { 'example.com/note': 'n' },
    }],
    ['a hand edit reads as the field it changed', agent((a) => (a.spec.declarative.modelConfig = 'hand-edited')), { modelConfig: 'hand-edited' }],
    ['a label added by hand is a label of the spec', agent((a) => (a.metadata.labels.extra = 'x')), { labels: { team: 'sre', extra: 'x' } }],
    ['a chat-only Agent (no header) keeps the known toolset', agent((a) => (a.spec.declarative.tools = [])), { toolset: ['preset:none'] }],
    ['a 1.x AgentTemplate: modelConfig.name and systemPrompt; the toolset (in its RemoteMCPServer) is the known one', template, {
      modelConfig: 'large',
      toolset: ['preset:none'],
      systemMessage: 'You help.',
      labels: { team: 'sre' },
    }],
  ])('%s', (_case, live, expected) => {
    const read = specOfLive(live, { modelConfig: 'default-model-config', toolset: ['preset:none'] });
    expect(read).toMatchObject(expected);
    if (live === template) expect(read).toEqual(expected);
  });
});

describe('comparableObjects', () => {
  it('shows the same object alike, and ignores what the API server adds to the spec', () => {
    const live = agent((a) => {
      a.spec.declarative.stream = false; // a CRD default
      a.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = '{}';
      a.status = { conditions: [] };
    });
    const sides = comparableObjects(agent(), live);
    expect(sides.live).toBe(sides.applied);
    expect(sides.applied).toContain('modelConfig: default-model-config');
    expect(sides.applied).not.toContain('meta.helm.sh');
  });

  it('shows a hand edit of a field the chart sets, and a label added by hand', () => {
    const sides = comparableObjects(agent(), agent((a) => {
      a.spec.description = 'Edited.';
      a.metadata.labels.extra = 'x';
    }));
    expect(sides.applied).toContain('description: Helps.');
    expect(sides.live).toContain('description: Edited.');
    expect(sides.live).toContain('extra: x');
  });

  it('is empty on the side that has no object', () => {
    expect(comparableObjects(agent(), null).live).toBe('');
    expect(comparableObjects(null, agent()).applied).toBe('');
  });
});
