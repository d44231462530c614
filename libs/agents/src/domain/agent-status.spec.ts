import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import type { Condition, LiveAgent } from '@app/kube';
import type { HistoryEntry } from '@app/helm';
import { foldStatus, type StatusFacts } from './agent-status.js';
import { sameData } from './drift.js';
import { lastDeployedRevision } from '../application/agents.service.js';

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

describe(`${foldStatus.name}: a pending or failed revision is compared with the last deployed one`, () => {
  const next: LiveAgent = { ...applied, spec: { type: 'Declarative', declarative: { modelConfig: 'm', systemMessage: 'next' } } };
  const nextValues = { ...values, systemMessage: 'next' };
  const ready = [{ type: 'Accepted', status: 'True' }, { type: 'Ready', status: 'True', observedGeneration: 2 }];
  const deployed = { revision: 2, agentRevision: 2, values, agent: applied };
  const unfinished = (status: string, over: Partial<StatusFacts> = {}) =>
    facts({ release: { status, revision: 3 }, releaseValues: nextValues, appliedAgent: next, deployed, ...over });

  it.each([
    ['an interrupted update, the cluster still at the deployed revision', unfinished('pending-upgrade'), 'progressing', /pending-upgrade at revision 3: a write that has not finished or was interrupted; the cluster still holds revision 2, the last deployed\. If no write is running, roll the agent back to revision 2/],
    ['an interrupted rollback', unfinished('pending-rollback'), 'progressing', /pending-rollback at revision 3.*still holds revision 2/],
    [
      'an interrupted update whose last deployed helm revision applied another agent revision',
      unfinished('pending-upgrade', { release: { status: 'pending-upgrade', revision: 6 }, deployed: { ...deployed, revision: 5, agentRevision: 3 } }),
      'progressing',
      /roll the agent back to revision 3 \(what helm revision 5 applied\) with freeStuckRelease/,
    ],
    [
      'an interrupted update whose last deployed helm revision no agent revision applied',
      unfinished('pending-upgrade', { deployed: { ...deployed, agentRevision: null } }),
      'progressing',
      /free the release with a rollback with freeStuckRelease to the agent revision whose helmRevision is 2 \(list_agent_revisions\), or helm rollback/,
    ],
    ['an update that applied its Agent before it was interrupted', unfinished('pending-upgrade', { liveAgent: live(ready, { spec: next.spec }) }), 'progressing', /already holds revision 3's Agent/],
    ['a failed upgrade, with helm\'s reason', unfinished('failed', { release: { status: 'failed', revision: 3, description: 'Upgrade "a" failed: timed out.' } }), 'failed', /failed at revision 3 \(Upgrade "a" failed: timed out\); the cluster still holds revision 2, the last deployed: update or roll back/],
    ['a pending install (nothing deployed before)', facts({ release: { status: 'pending-install', revision: 1 }, deployed: null }), 'progressing', /^The helm release is pending-install at revision 1\.$/],
    ['a deployed release ignores an old baseline', facts({ deployed: { revision: 1, values: nextValues, agent: next } }), 'ready', /ready at revision 2/],
  ])('%s', (_case, input, verdict, message) => {
    const status = foldStatus(input);
    expect(status).toMatchObject({ verdict, drift: [] });
    expect(status.message).toMatch(message);
  });

  it('still reports an edit outside agent-manager that matches neither revision, against the deployed one', () => {
    const edited = live(ready, { spec: { type: 'Declarative', declarative: { modelConfig: 'm', systemMessage: 'kubectl' } } });
    const status = foldStatus(unfinished('pending-upgrade', { liveAgent: edited }));
    expect(status.verdict).toBe('failed');
    expect(status.drift).toEqual(['the live Agent was changed outside agent-manager at spec.declarative.systemMessage']);
  });

  it('without the deployed revision (history unreadable), compares with the current one as before', () => {
    const status = foldStatus(unfinished('pending-upgrade', { deployed: null }));
    expect(status.verdict).toBe('failed');
    expect(status.drift[0]).toMatch(/release values differ from the store in systemMessage/);
  });
});

describe(lastDeployedRevision.name, () => {
  const entry = (revision: number, status: string): HistoryEntry => ({ revision, status, updated: '', chart: 'agent-0.6.0', app_version: '', description: '' });
  it.each([
    ['the deployed revision behind a pending upgrade', [entry(1, 'superseded'), entry(2, 'deployed'), entry(3, 'pending-upgrade')], 3, 2],
    ['the newest deployed, skipping failed ones', [entry(1, 'superseded'), entry(2, 'deployed'), entry(3, 'failed'), entry(4, 'failed')], 4, 2],
    ['the newest superseded when none is deployed', [entry(1, 'superseded'), entry(2, 'superseded'), entry(3, 'failed')], 3, 2],
    ['none for a first install', [entry(1, 'pending-install')], 1, undefined],
  ])('%s', (_case, history, current, expected) => {
    expect(lastDeployedRevision(history, current)).toBe(expected);
  });
});

describe(sameData.name, () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['equal nested data in any key order', { a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] }, true],
    ['data from another realm (a worker thread, a vm context)', runInNewContext('({ tools: [{ names: ["a"] }] })'), { tools: [{ names: ['a'] }] }, true],
    ['a different array item', { a: [1, 2] }, { a: [1, 3] }, false],
    ['an array against an object with the same keys', [1], { 0: 1 }, false],
    ['an extra key', { a: 1 }, { a: 1, b: undefined }, false],
    ['a string against a number', '1', 1, false],
  ])('%s', (_case, a, b, same) => {
    expect(sameData(a, b)).toBe(same);
  });
});
