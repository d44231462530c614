import { describe, expect, it } from '@jest/globals';
import { AppError } from '@app/common';
import { ModelConfigListError, type ModelConfigReader, type ModelConfigSummary } from '@app/kube';
import { editDistance, missingModelConfig, ModelConfigCheck, modelConfigView, nearMiss, nearMissFirst, readinessOf, uncheckedModelConfig } from './model-config-check.js';

describe(nearMiss.name, () => {
  it.each<[string, string[], string | undefined]>([
    ['gpt-5-prd', ['claude', 'gpt-5-prod', 'gpt-4o'], 'gpt-5-prod'],
    ['GPT_5_Prod', ['claude', 'gpt-5-prod'], 'gpt-5-prod'],
    ['gpt5prod', ['gpt-5-prod', 'gpt-5-dev'], 'gpt-5-prod'],
    ['default-model-confg', ['default-model-config'], 'default-model-config'],
    ['claude', ['gpt-5-prod', 'ollama-local'], undefined],
    ['x', [], undefined],
  ])('%s among %j: %s', (name, names, expected) => {
    expect(nearMiss(name, names)).toBe(expected);
  });

  it('orders the closest first, then by name', () => {
    expect(nearMissFirst('gpt-5-prd', ['zeta', 'alpha', 'gpt-5-prod', 'gpt-5-dev'])).toEqual(['gpt-5-prod', 'gpt-5-dev', 'alpha', 'zeta']);
  });

  it('counts edits', () => {
    expect([editDistance('kitten', 'sitting'), editDistance('', 'abc'), editDistance('same', 'same')]).toEqual([3, 3, 0]);
  });
});

describe(missingModelConfig.name, () => {
  it('names the near-miss and lists the others after it', () => {
    expect(missingModelConfig('team-a', 'gpt-5-prd', ['claude', 'gpt-5-prod'])).toEqual({
      path: 'modelConfig',
      message: 'modelConfig "gpt-5-prd" names no ModelConfig in namespace team-a: did you mean "gpt-5-prod"? ModelConfigs there: "gpt-5-prod", "claude"',
    });
  });

  it('says when the namespace has none', () => {
    expect(missingModelConfig('team-a', 'm', []).message).toBe(
      'modelConfig "m" names no ModelConfig in namespace team-a, which has none: create the kagent ModelConfig there first, or write the agent in the namespace that has it',
    );
  });

  it('lists twenty and says how many more', () => {
    const names = Array.from({ length: 25 }, (_, i) => `model-${String(i).padStart(2, '0')}`);
    expect(missingModelConfig('team-a', 'other', names).message).toMatch(/"model-19" and 5 more \(list_model_configs lists them all\)$/);
  });
});

describe(readinessOf.name, () => {
  it.each<[string, object[], string, string | null]>([
    ['no conditions yet', [], 'unknown', null],
    ['Accepted=True', [{ type: 'Accepted', status: 'True', reason: 'ModelConfigReconciled' }], 'ready', 'ModelConfigReconciled'],
    ['Accepted=False', [{ type: 'Accepted', status: 'False', reason: 'SecretNotFound' }], 'notReady', 'SecretNotFound'],
    ['Accepted=Unknown', [{ type: 'Accepted', status: 'Unknown' }], 'unknown', null],
    ['Ready decides over Accepted', [{ type: 'Accepted', status: 'True' }, { type: 'Ready', status: 'False', reason: 'Probing' }], 'notReady', 'Probing'],
  ])('%s', (_case, conditions, readiness, reason) => {
    expect(readinessOf(conditions as never)).toEqual({ readiness, reason });
  });

  it('shows no condition message (it can name the Secret)', () => {
    const summary: ModelConfigSummary = { name: 'm', provider: 'OpenAI', model: 'gpt-4o', conditions: [{ type: 'Accepted', status: 'False', reason: 'SecretNotFound', message: 'secret openai-key not found' }] };
    expect(JSON.stringify(modelConfigView(summary))).not.toContain('openai-key');
  });
});

describe(ModelConfigCheck.name, () => {
  const reader = (answer: () => Promise<ModelConfigSummary[]>) => ({ list: answer }) as unknown as ModelConfigReader;
  const listed = (...names: string[]) => reader(async () => names.map((name) => ({ name, provider: 'OpenAI', model: 'gpt-4o', conditions: [] })));

  it('passes a name the namespace has, without warnings', async () => {
    await expect(new ModelConfigCheck(listed('a', 'm')).check('ns', 'm')).resolves.toEqual([]);
  });

  it('refuses a missing name with 400 on field modelConfig, kept from no idempotency key', async () => {
    const refused = await new ModelConfigCheck(listed('gpt-5-prod')).check('ns', 'gpt-5-prd').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'invalid_request', environmental: true, details: [{ path: 'modelConfig' }] });
    expect((refused as AppError).message).toMatch(/did you mean "gpt-5-prod"\?/);
  });

  it.each(['forbidden', 'no_api', 'no_namespace', 'unreachable'] as const)('lets the write go ahead with a warning when the list fails: %s', async (reason) => {
    const failing = reader(async () => {
      throw new ModelConfigListError(reason, new AppError('backend_error', 'x'));
    });
    await expect(new ModelConfigCheck(failing).check('ns', 'm')).resolves.toEqual([uncheckedModelConfig('ns', 'm', reason)]);
  });

  it('leaves a name no Kubernetes object can have to the cluster, which refuses its form in its own words', async () => {
    const unread = reader(async () => {
      throw new Error('not listed');
    });
    await expect(new ModelConfigCheck(unread).check('ns', 'Not_A_Name')).resolves.toEqual([]);
  });

  it('does not swallow what is not a list failure', async () => {
    const broken = reader(async () => {
      throw new TypeError('bug');
    });
    await expect(new ModelConfigCheck(broken).check('ns', 'm')).rejects.toThrow(TypeError);
  });
});
