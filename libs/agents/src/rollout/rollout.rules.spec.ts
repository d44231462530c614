import { describe, expect, it } from '@jest/globals';
import type { LiveAgent } from '@app/kube';
import { manifestDiff } from '../domain/spec-diff.js';
import { gateVerdict, overBudget, planWaves } from './rollout.rules.js';

describe('planWaves', () => {
  it.each([
    [12, [1, 5, 6], [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]],
    [12, [1, 5], [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3]],
    [3, [1], [0, 1, 2]],
    [2, [10], [0, 0]],
    [0, [1, 5], []],
  ])('%i agents in waves %j: %j', (count, sizes, waves) => {
    expect(planWaves(count, sizes)).toEqual(waves);
  });
});

const agent = (status: LiveAgent['status'], generation = 2): LiveAgent => ({ metadata: { name: 'a', namespace: 'n', generation }, spec: {}, status });
const ok = (type: string) => ({ type, status: 'True' });

describe('gateVerdict', () => {
  it.each([
    ['no live Agent: wait', null, { healthy: false, final: false, reason: 'the live Agent does not exist' }],
    ['an older generation observed: wait', agent({ observedGeneration: 1, conditions: [ok('Accepted'), ok('Ready')] }), { healthy: false, final: false }],
    ['no Ready yet: wait', agent({ observedGeneration: 2, conditions: [ok('Accepted')] }), { healthy: false, final: false, reason: 'the Agent reports no Ready condition yet' }],
    ['Ready False, generation observed: final', agent({ observedGeneration: 2, conditions: [ok('Accepted'), { type: 'Ready', status: 'False', reason: 'DeploymentNotReady', message: 'crashing' }] }), { healthy: false, final: true, reason: 'Ready is False (DeploymentNotReady: crashing)' }],
    ['Accepted False without observedGeneration: wait (it may be the old generation)', agent({ conditions: [{ type: 'Accepted', status: 'False' }] }), { healthy: false, final: false }],
    ['Ready Unknown: wait', agent({ observedGeneration: 2, conditions: [ok('Accepted'), { type: 'Ready', status: 'Unknown' }] }), { healthy: false, final: false }],
    ['Accepted and Ready True at the generation: healthy', agent({ observedGeneration: 2, conditions: [ok('Accepted'), ok('Ready')] }), { healthy: true }],
  ])('%s', (_case, live, verdict) => {
    expect(gateVerdict(live)).toMatchObject(verdict);
  });
});

describe('manifestDiff and the budget', () => {
  it('answers "" for the same manifests and a unified diff otherwise', () => {
    expect(manifestDiff('n/a', 'x: 1\n', 'x: 1\n', { from: 'agent 0.6.0', to: 'agent 0.6.1' })).toBe('');
    const diff = manifestDiff('n/a', 'x: 1\n', 'x: 2\n', { from: 'agent 0.6.0', to: 'agent 0.6.1' });
    expect(diff).toContain('--- n/a (agent 0.6.0)');
    expect(diff).toContain('-x: 1\n+x: 2');
  });

  it('stops past the budget, not at it', () => {
    expect(overBudget(0, 0)).toBe(false);
    expect(overBudget(1, 0)).toBe(true);
    expect(overBudget(2, 2)).toBe(false);
  });
});
