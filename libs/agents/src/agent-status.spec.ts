import { describe, expect, it } from '@jest/globals';
import type { Condition, LiveAgent } from '@app/kube';
import { foldStatus, type StatusFacts } from './agent-status.js';

const values = { modelConfig: 'm', toolset: ['preset:read-only'] };
const applied: LiveAgent = {
  metadata: { name: 'a', namespace: 'n', labels: { team: 'sre' } },
  spec: { type: 'Declarative', declarative: { modelConfig: 'm', systemMessage: 'hi' } },
};
const live = (conditions: Condition[], change: Partial<LiveAgent> = {}): LiveAgent => ({
  ...applied,
  metadata: { ...applied.metadata, generation: 2 },
  status: { conditions },
  ...change,
});
const facts = (over: Partial<StatusFacts> = {}): StatusFacts => ({
  namespace: 'n',
  name: 'a',
  storeRevision: 2,
  storeValues: values,
  release: { status: 'deployed', revision: 2 },
  releaseValues: values,
  appliedAgent: applied,
  liveAgent: live([{ type: 'Accepted', status: 'True' }, { type: 'Ready', status: 'True', observedGeneration: 2 }]),
  ...over,
});

describe(foldStatus.name, () => {
  it.each([
    ['ready when deployed and Ready', facts(), 'ready', /ready at revision 2/],
    ['progressing before kagent reports', facts({ liveAgent: live([]) }), 'progressing', /not reported/],
    ['progressing while an older generation is Ready', facts({ liveAgent: live([{ type: 'Ready', status: 'True', observedGeneration: 1 }]) }), 'progressing', /generation 2/],
    ['failed when kagent refused it', facts({ liveAgent: live([{ type: 'Accepted', status: 'False', reason: 'ModelConfigNotFound', message: 'no such ModelConfig m' }]) }), 'failed', /ModelConfigNotFound: no such ModelConfig m/],
    ['progressing when accepted but not ready', facts({ liveAgent: live([{ type: 'Accepted', status: 'True' }, { type: 'Ready', status: 'False', reason: 'DeploymentNotReady' }]) }), 'progressing', /DeploymentNotReady/],
    ['progressing while the release is pending', facts({ release: { status: 'pending-upgrade', revision: 3 } }), 'progressing', /pending-upgrade/],
    ['failed when the release failed', facts({ release: { status: 'failed', revision: 3 } }), 'failed', /failed at revision 3/],
    ['failed when the release is missing', facts({ release: null }), 'failed', /release n\/a is missing/],
  ])('%s', (_case, input, verdict, message) => {
    const status = foldStatus(input);
    expect(status.verdict).toBe(verdict);
    expect(status.message).toMatch(message);
  });

  it('names the values that differ between the store and the release', () => {
    const status = foldStatus(facts({ releaseValues: { ...values, toolset: ['preset:full'] } }));
    expect(status.verdict).toBe('failed');
    expect(status.drift).toEqual(['release values differ from the store in toolset']);
  });

  it('names the fields of the live Agent changed outside agent-manager, ignoring server-added ones', () => {
    const changed = live([{ type: 'Ready', status: 'True' }], {
      spec: { type: 'Declarative', declarative: { modelConfig: 'm', systemMessage: 'edited', stream: true } },
      metadata: { name: 'a', namespace: 'n', labels: { team: 'other' }, annotations: { 'added-by': 'kubectl' } },
    });
    const status = foldStatus(facts({ liveAgent: changed }));
    expect(status.verdict).toBe('failed');
    expect(status.drift).toEqual(['the live Agent was changed outside agent-manager at spec.declarative.systemMessage, metadata.labels.team']);
  });

  it('reports an Agent deleted from the cluster', () => {
    expect(foldStatus(facts({ liveAgent: null })).drift).toEqual(['Agent: missing from the cluster']);
  });
});
