import { describe, expect, it } from '@jest/globals';
import { OperationContexts, type OperationContext } from './operation-context.js';

const alice: OperationContext['principal'] = { subject: 'oidc:alice', groups: ['team-a', 'system:masters', 'team-b'], method: 'oidc' };

describe('OperationContexts.kubeIdentity', () => {
  it('impersonates the verified caller with its groups, less the ones the cluster reserves', () => {
    const identity = OperationContexts.run({ door: 'rest', actor: 'oidc:alice', principal: alice }, () => OperationContexts.kubeIdentity());
    expect(identity).toEqual({ user: 'oidc:alice', groups: ['team-a', 'team-b'] });
  });

  it.each([
    ["the service's own work", undefined],
    ['a caller when auth is off', { subject: 'anonymous', groups: [], method: 'anonymous' as const }],
  ])('impersonates nobody for %s', (_case, principal) => {
    expect(OperationContexts.run({ door: 'rest', actor: 'api', principal }, () => OperationContexts.kubeIdentity())).toBeUndefined();
    expect(OperationContexts.kubeIdentity()).toBeUndefined();
  });

  it('acts as the service inside a request for work run asService, and as the caller again after it', async () => {
    await OperationContexts.run({ door: 'rest', actor: 'oidc:alice', principal: alice }, async () => {
      const inside = await OperationContexts.asService(async () => {
        await Promise.resolve();
        return OperationContexts.kubeIdentity();
      });
      expect(inside).toBeUndefined();
      expect(OperationContexts.current()).toMatchObject({ actor: 'oidc:alice' });
      expect(OperationContexts.kubeIdentity()?.user).toBe('oidc:alice');
    });
  });

  it('refuses to act as a user name the cluster reserves', () => {
    const principal = { subject: 'system:admin', groups: [], method: 'oidc' as const };
    expect(() => OperationContexts.run({ door: 'rest', actor: 'x', principal }, () => OperationContexts.kubeIdentity())).toThrow(
      /does not act on the cluster as "system:admin": names starting with "system:" are the cluster's own/,
    );
  });
});
