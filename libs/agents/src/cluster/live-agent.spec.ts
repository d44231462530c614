import { describe, expect, it } from '@jest/globals';
import { templateAsAgent } from './live-agent.js';

const template = (status: object | undefined) => ({ metadata: { name: 'a', namespace: 'n', generation: 3 }, spec: { modelConfig: { name: 'm' } }, status: status as Record<string, unknown> | undefined });
const condition = (type: string, status: string, reason = 'R') => ({ type, status, reason, message: 'm' });

describe('templateAsAgent: an AgentTemplate as status reads an Agent', () => {
  it.each([
    ['no status: no conditions', undefined, []],
    ['one harness, Ready true: Ready true at the observed generation', { observedGeneration: 3, harnesses: [{ harness: 'kagent', conditions: [condition('Ready', 'True')] }] }, [{ type: 'Ready', status: 'True', observedGeneration: 3 }]],
    [
      'two harnesses, one not ready: the one that is not',
      { observedGeneration: 2, harnesses: [{ harness: 'a', conditions: [condition('Ready', 'True')] }, { harness: 'b', conditions: [condition('Ready', 'False', 'CrashLoop')] }] },
      [{ type: 'Ready', status: 'False', reason: 'CrashLoop', observedGeneration: 2 }],
    ],
    [
      'Accepted and Ready, each folded',
      { observedGeneration: 3, harnesses: [{ harness: 'a', conditions: [condition('Accepted', 'True'), condition('Ready', 'Unknown')] }] },
      [{ type: 'Accepted', status: 'True' }, { type: 'Ready', status: 'Unknown' }],
    ],
  ])('%s', (_case, status, conditions) => {
    const agent = templateAsAgent(template(status));
    expect(agent.status?.conditions).toEqual(conditions.map((c) => expect.objectContaining(c)));
    expect(agent.spec).toEqual({ modelConfig: { name: 'm' } });
  });
});
