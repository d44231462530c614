import { describe, expect, it } from '@jest/globals';
import { backoffMs, signature } from './webhook-dispatcher.js';
import { parseWebhooks, subscriptionMatcher, typeMatcher } from './webhooks-file.js';

describe('WEBHOOKS_FILE', () => {
  const good = { name: 'chat-ops', url: 'https://hooks.example.com/am', secret: 'sixteen-chars-at-least' };

  it('reads a list of subscriptions, types defaulting to every type', () => {
    expect(parseWebhooks(JSON.stringify([good, { ...good, name: 'team-a', types: ['io.agent-manager.agent.*'], namespaces: ['team-a', 'payments-*'] }]), 'f.yaml')).toEqual([
      { ...good, types: ['*'] },
      { ...good, name: 'team-a', types: ['io.agent-manager.agent.*'], namespaces: ['team-a', 'payments-*'] },
    ]);
  });

  it.each([
    ['not a list', 'name: x', /must be a YAML list/],
    ['an unknown field', JSON.stringify([{ ...good, retries: 3 }]), /webhook 1 \(chat-ops\), retries: unknown field/],
    ['a bad url', JSON.stringify([{ ...good, url: 'ftp://x' }]), /webhook 1 \(chat-ops\), url: must be an http:\/\/ or https:\/\/ URL/],
    ['a short secret', JSON.stringify([{ ...good, secret: 'short' }]), /webhook 1 \(chat-ops\), secret: must be a string of at least 16 characters/],
    ['a duplicate name', JSON.stringify([good, good]), /webhook 2 \(chat-ops\), name: another webhook has this name/],
    ['types not a list', JSON.stringify([{ ...good, types: 'io.agent-manager.*' }]), /webhook 1 \(chat-ops\), types: must be a non-empty list of event types/],
    ['a bad namespace pattern', JSON.stringify([{ ...good, namespaces: ['Team A'] }]), /webhook 1 \(chat-ops\), namespaces: must be a non-empty list of namespace names or patterns/],
    ['an entry that is no mapping', JSON.stringify(['x']), /webhook 1: must be a mapping/],
  ])('refuses %s, naming the entry and field', (_what, text, message) => {
    expect(() => parseWebhooks(text, 'f.yaml')).toThrow(message);
  });

  it('matches types with `*` and namespaces with their patterns; a namespace filter leaves cluster-wide events out', () => {
    expect(typeMatcher('io.agent-manager.*.created')('io.agent-manager.blueprint.created')).toBe(true);
    expect(typeMatcher('io.agent-manager.agent.*')('io.agent-manager.blueprint.created')).toBe(false);
    const matches = subscriptionMatcher({ ...good, types: ['io.agent-manager.agent.*'], namespaces: ['payments-*'] });
    expect(matches({ type: 'io.agent-manager.agent.updated', namespace: 'payments-eu' })).toBe(true);
    expect(matches({ type: 'io.agent-manager.agent.updated', namespace: 'team-a' })).toBe(false);
    expect(subscriptionMatcher({ ...good, types: ['*'], namespaces: ['*'] })({ type: 'io.agent-manager.rollout.started', namespace: null })).toBe(false);
  });
});

describe('deliveries', () => {
  it('signs "<t>.<body>" with HMAC-SHA256 of the secret', () => {
    // echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'secret'
    expect(signature('secret', '{"a":1}', 1_700_000_000)).toBe('t=1700000000,v1=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686');
  });

  it('backs off exponentially up to the bound', () => {
    expect([1, 2, 3, 4, 10].map((attempts) => backoffMs(attempts, 1000, 5000))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });
});
