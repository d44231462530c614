// npm test: also on PostgreSQL — status of a release held pending: the revision to roll back to, read from the store
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig, type Caller } from '@app/common';
import type { LiveAgent } from '@app/kube';
import { Store } from '@app/store';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { writeParts } from '../../../../test/support/write-parts.js';
import { CreateAgentDto, UpdateAgentDto } from '../api/requests.dto.js';
import { parseInput, readInput } from '@app/doors';
import { readValidateCommand } from '../api/validate-command.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { AgentsService } from './agents.service.js';
import { ManifestReader } from '../cluster/manifest-reader.js';

/**
 * get_agent_status while helm holds a revision pending, on the real store with a FAKE helm (named
 * as such: releases in memory) and a FAKE cluster read of the live Agent: what its message tells
 * whom. The cluster suites read a real release.
 */
describe(`${AgentsService.name}: status of a release helm holds pending`, () => {
  let db: FreshDatabase;
  let store: Store;
  let helm: FakeHelm;
  let agents: AgentsService;
  const manifests = new ManifestReader();
  const ref = { namespace: 'ns', name: 'held' };
  const HELM_WORDS = 'Upgrade "held" failed: dial tcp 10.96.0.12:443: connect: connection refused';

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    helm = new FakeHelm();
    const repository = new AgentsRepository(store);
    const { runner } = writeParts(config, store, helm, { repository });
    // The live Agent as the fake helm's manifests describe it (`kind: Agent`, nothing more): no drift.
    agents = new AgentsService(repository, helm, { getAgent: async () => ({ metadata: {} }) as LiveAgent }, runner, manifests, config);
    const alice: Caller = { door: 'rest', actor: 'alice', requestId: 'request of alice' };
    await agents.create(alice, parseInput(CreateAgentDto, { ...ref, modelConfig: 'm', toolset: ['preset:read-only'] }));
    await agents.update(alice, ref, parseInput(UpdateAgentDto, { description: 'v2' }));
    // A helm run outside agent-manager: helm's numbering moves ahead of the agent's.
    await helm.upgradeInstall(ref, { ref: 'charts/agent' }, (await repository.findActive('ns', 'held'))!.values);
    await agents.update(alice, ref, parseInput(UpdateAgentDto, { description: 'v3' }));
    const agent = (await repository.findActive('ns', 'held'))!;
    expect({ revision: agent.revision, helmRevision: agent.helmRevision }).toEqual({ revision: 3, helmRevision: 4 });
    helm.hold(ref, 'pending-upgrade', { ...agent.values, description: 'v4' }).description = HELM_WORDS;
  });

  afterAll(async () => {
    await manifests.close();
    await store?.client.$disconnect();
    await db?.drop();
  });

  it("names the agent's revision to roll back to (what rollback_agent takes), not helm's number", async () => {
    const status = await agents.status(ref, { admin: true });
    expect(status.message).toMatch(/pending-upgrade at revision 5/);
    expect(status.message).toMatch(/roll the agent back to revision 3 \(what helm revision 4 applied\) with freeStuckRelease/);
  });

  it("shows helm's own words to admins only", async () => {
    expect((await agents.status(ref, { admin: true })).message).toContain(HELM_WORDS);
    const other = await agents.status(ref, { admin: false });
    expect(other.message).not.toContain('dial tcp');
    expect(other.message).toMatch(/^The helm release is pending-upgrade at revision 5: a write that has not finished/);
  });

  it('validates a create onto a taken name with the refusal create_agent answers, as a violation on name', async () => {
    const body = { ...ref, modelConfig: 'm', toolset: ['preset:read-only'] };
    const refusal = await agents.create({ door: 'rest', actor: 'bob', requestId: 'request of bob' }, parseInput(CreateAgentDto, body)).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refusal).toMatch(/^agent ns\/held already exists/);
    const answer = await agents.validate(readValidateCommand(body));
    expect(answer).toMatchObject({ valid: false, manifests: null });
    expect(answer.violations).toEqual([{ path: 'name', message: refusal }]);
  });

  it("validates a create's required fields by create_agent's own rules and words", async () => {
    const body = { namespace: 'ns', name: 'fresh' };
    const answer = await agents.validate(readValidateCommand(body));
    expect(answer.valid).toBe(false);
    const create = readInput(CreateAgentDto, body).violations;
    expect(create.map((v) => v.path).sort()).toEqual(['modelConfig', 'toolset']);
    expect(answer.violations).toEqual(expect.arrayContaining(create));
    expect(answer.violations).toHaveLength(create.length);
    // An update names neither: the agent's own stand.
    expect((await agents.validate(readValidateCommand({ ...ref, mode: 'update', description: 'v5' }))).violations).toEqual([]);
  });
});
