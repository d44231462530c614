// The write runner's decisions, a table per use case, on fakes: no store, no helm binary.
import { describe, expect, it } from '@jest/globals';
import { AppError, loadConfig, type Caller } from '@app/common';
import { HelmReleases, type ListedRelease, type ReleaseRef } from '@app/helm';
import { FakeAgentLock } from '../../../../test/support/fake-agent-lock.js';
import { FakeAgentStore } from '../../../../test/support/fake-agent-store.js';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { CreateAgentDto, DeleteAgentDto, RollbackAgentDto, UpdateAgentDto } from '../api/requests.dto.js';
import { parseInput } from '@app/doors';
import { toChartValues, type AgentOrigin } from '../domain/agent-spec.js';
import type { IdempotencyRepository } from '../persistence/idempotency.repository.js';
import { OperationRecovery } from '../application/operation-recovery.service.js';
import type { ReconcileAction } from '../domain/recovery-decision.js';
import { adoptAgent } from '../use-cases/adopt-agent.js';
import { createAgent } from '../use-cases/create-agent.js';
import { deleteAgent } from '../use-cases/delete-agent.js';
import { reconcileAgent, type Decided } from '../use-cases/reconcile-agent.js';
import { rollbackAgent } from '../use-cases/rollback-agent.js';
import { updateAgent } from '../use-cases/update-agent.js';
import { AgentBusy } from './agent-lock.js';
import { IdempotencyGate } from './idempotency-gate.js';
import { ShutdownGate } from './shutdown-gate.js';
import { UncertainWrite } from './uncertain-write.js';
import { WriteRunner } from './write-runner.js';
import type { OwnerEvidence } from '../domain/gitops-owner.js';

/** The FAKE helm with the per-revision values `helm get values` gives (what an adoption reads through HelmReleases). */
class ReleasesHelm extends FakeHelm {
  override async getValues(release: ReleaseRef, revision?: number): Promise<Record<string, unknown>> {
    this.calls.push(`values ${release.name} r${revision}`);
    return (this.revisions.get(`${release.namespace}/${release.name}`)?.find((info) => info.revision === revision)?.values ?? {}) as Record<string, unknown>;
  }
}

/** These rows send no idempotency key (its behaviour is tested on the real store, gates.int-spec.ts): a use of the key store fails the row. */
const NO_KEY_STORE = new Proxy({} as IdempotencyRepository, {
  get: (_target, method) => () => {
    throw new Error(`the unit rows send no idempotency key, yet IdempotencyRepository.${String(method)} was called`);
  },
});

const config = loadConfig({ DATABASE_URL: 'file:/nonexistent/unit-rows.db', REPLICA_ID: 'replica-a', LEASE_TTL_SECONDS: '5' });
const NS = 'ns';
const SPEC = { modelConfig: 'm', toolset: ['preset:read-only'] };
const caller = (actor: string): Caller => ({ actor, door: 'rest', requestId: `request of ${actor}` });
const ref = (name: string) => ({ namespace: NS, name });

/**
 * What the cluster says about who owns release `a` (release-owners.ts reads it on the real cluster):
 * nothing until a row sets `metadata`; `asked` counts the reads, which a create never makes.
 */
class FakeOwners {
  metadata: OwnerEvidence['live'] = null;
  asked = 0;
  async evidence(namespace: string, name: string): Promise<OwnerEvidence> {
    this.asked++;
    return { namespace, name, live: this.metadata, release: null, manifest: null };
  }
}
const FLUX_LABELS = { labels: { 'helm.toolkit.fluxcd.io/name': 'agents', 'helm.toolkit.fluxcd.io/namespace': 'flux-apps' } };
/** Flux takes the release over after it was made (the owner is read on every write, never kept). */
const fluxTakesOver = (arrange: (w: Parts) => Promise<void>) => async (w: Parts) => {
  await arrange(w);
  w.owners.metadata = FLUX_LABELS;
};

/** The runner over fakes, as AgentsModule wires the real parts. */
function parts() {
  const store = new FakeAgentStore();
  const helm = new ReleasesHelm();
  const lock = new FakeAgentLock();
  const gate = new ShutdownGate();
  const keys = new IdempotencyGate(config, NO_KEY_STORE);
  const recovery = new OperationRecovery(config, store, lock, helm, keys);
  const owners = new FakeOwners();
  const runner = new WriteRunner(config, store, helm, gate, lock, keys, recovery, undefined, owners);
  return { store, helm, lock, gate, recovery, runner, owners };
}
type Parts = ReturnType<typeof parts>;

const create = (w: Parts, name: string, extra: object = {}, origin?: AgentOrigin, actor = 'alice') =>
  w.runner.run(caller(actor), createAgent(parseInput(CreateAgentDto, { ...SPEC, namespace: NS, name, ...extra }), origin));
const update = (w: Parts, name: string, body: object, origin?: AgentOrigin) =>
  w.runner.run(caller('bob'), updateAgent(ref(name), parseInput(UpdateAgentDto, body), origin));
const remove = (w: Parts, name: string, body: object = {}) => w.runner.run(caller('dave'), deleteAgent(ref(name), parseInput(DeleteAgentDto, body)));
const rollback = (w: Parts, name: string, body: object) => w.runner.run(caller('carol'), rollbackAgent(ref(name), parseInput(RollbackAgentDto, body)));
/** An adoption of the release `helm list` showed as `listed` (of the agent chart). */
const adopt = (w: Parts, name: string, listed: Partial<ListedRelease> = {}, dryRun?: boolean) => {
  const seen: ListedRelease = { name, namespace: NS, revision: 1, status: 'deployed', chart: 'agent-0.1.0', ...listed };
  return w.runner.run(caller('alice'), adoptAgent(new HelmReleases(w.helm), { ...ref(name), dryRun }, seen));
};
/** A reconcile action the decision table chose (`decide`), run as the reconciler runs it. */
const reconcile = (w: Parts, name: string, decide: (w: Parts) => Promise<Decided>, dryRun = false) => {
  const actions = { decide: () => decide(w), supersede: (ops: Parameters<OperationRecovery['supersede']>[0], by: string) => w.recovery.supersede(ops, by) };
  return w.runner.run({ ...caller('alice'), actor: 'reconciler@replica-a' }, reconcileAgent(actions, ref(name), dryRun));
};
const decided = (action: ReconcileAction) => async (): Promise<Decided> => ({ action, agent: null, intent: null });

/** An agent `name` at revision 1 (created through the runner), optionally from a blueprint. */
const seeded = (origin?: AgentOrigin) => async (w: Parts) => void (await create(w, 'a', {}, origin, 'seed'));
/** …then updated to revision 2. */
const seededTwice = async (w: Parts) => {
  await seeded()(w);
  await update(w, 'a', { description: 'v2' });
};
/** A write a dead replica journaled on agent `a` and never closed; helm left the release as `status` says (with its values when pending). */
const interrupted = (status: 'deployed' | 'pending-upgrade') => async (w: Parts) => {
  await seededTwice(w);
  const agent = (await w.store.findActive(NS, 'a'))!;
  const values = { ...agent.values, description: 'v3' };
  await w.store.startOperation({
    id: 'op-of-a-dead-replica', kind: 'update', ...ref('a'), agentId: agent.id, request: {}, actor: 'erin', owner: 'replica-gone',
    intent: { spec: { ...agent.spec, description: 'v3' }, values }, baseHelmRevision: agent.helmRevision,
  });
  if (status !== 'deployed') w.helm.hold(ref('a'), status, values);
};

/** What a user notices of one run: helm's calls, the journal entries it added or changed, the agent after, the answer or the refusal. */
interface Observed {
  helm: string[];
  journal: { id: string; kind: string; operation: string | undefined; actor: string; state: string; errorMessage?: string }[];
  agent: { revision: number; version: number; origin: AgentOrigin | null; helmRevision: number | null } | null;
  answer?: unknown;
  refusal?: { code: string; fields: string[]; message: string; uncertain: boolean; busy: boolean };
}

async function observe(w: Parts, name: string, act: (w: Parts) => Promise<unknown>): Promise<Observed> {
  const entries = () => w.store.journal(ref(name)).map((op) => ({
    id: op.id, kind: op.kind, operation: op.audit?.operation, actor: op.actor, state: op.state, ...(op.errorMessage && { errorMessage: op.errorMessage }),
  }));
  const before = new Map(entries().map((entry) => [entry.id, JSON.stringify(entry)]));
  w.helm.calls.length = 0;
  const observed: Partial<Observed> = {};
  try {
    observed.answer = await act(w);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    observed.refusal = {
      code: error.code, fields: error.details.map((d) => d.path), message: error.message, uncertain: error instanceof UncertainWrite, busy: error instanceof AgentBusy,
    };
  }
  const agent = await w.store.findActive(NS, name);
  return {
    ...observed,
    helm: [...w.helm.calls],
    journal: entries().filter((entry) => before.get(entry.id) !== JSON.stringify(entry)),
    agent: agent && { revision: agent.revision, version: agent.version, origin: agent.origin, helmRevision: agent.helmRevision },
  };
}

interface Row {
  situation: string;
  arrange?: (w: Parts) => Promise<void>;
  act: (w: Parts) => Promise<unknown>;
  helm: string[];
  /** The journal entries added or changed (an entry a test journaled by hand has no operation name); messages may be matchers. */
  journal: { kind: string; operation?: string; actor: string; state: string; errorMessage?: unknown }[];
  agent: Partial<NonNullable<Observed['agent']>> | null;
  answer?: object;
  refusal?: { code: string; fields?: string[]; message?: unknown; uncertain?: boolean; busy?: boolean };
}

/** Runs one row on fresh fakes and checks every part of what it observed. */
async function check(row: Row): Promise<void> {
  const w = parts();
  await row.arrange?.(w);
  const seen = await observe(w, 'a', row.act);
  expect(seen.refusal).toEqual(row.refusal ? expect.objectContaining(row.refusal) : undefined);
  if (row.answer) expect(seen.answer).toMatchObject(row.answer);
  expect(seen.helm).toEqual(row.helm);
  expect(seen.journal.map(({ id: _id, ...entry }) => entry)).toEqual(row.journal.map((entry) => expect.objectContaining(entry)));
  expect(seen.agent).toEqual(row.agent === null ? null : expect.objectContaining(row.agent));
}

const noChange = { helm: [], journal: [] };
const succeeded = (kind: string, operation: string, actor: string) => ({ kind, operation, actor, state: 'succeeded' });
const HELPER_V2 = { blueprint: 'helper', version: 2 };
const HELPER_V3 = { blueprint: 'helper', version: 3 };

describe(WriteRunner.name, () => {
  describe('create', () => {
    it.each<Row>([
      {
        situation: 'a free name: helm install, revision 1, journaled succeeded by the caller',
        act: (w) => create(w, 'a'),
        helm: ['install a'],
        journal: [succeeded('create', 'create_agent', 'alice')],
        agent: { revision: 1, version: 1, helmRevision: 1, origin: null },
        answer: { dryRun: false, agent: { revision: 1, createdBy: 'alice', lastOperation: { kind: 'create', state: 'succeeded' } }, manifests: 'kind: Agent # r1' },
      },
      {
        situation: 'a free name through a blueprint: the origin is recorded with the agent',
        act: (w) => create(w, 'a', {}, HELPER_V2),
        helm: ['install a'],
        journal: [succeeded('create', 'create_agent', 'alice')],
        agent: { revision: 1, version: 1, origin: HELPER_V2 },
      },
      {
        situation: 'a taken name: 409 naming `name`, no journal entry, no helm',
        arrange: seeded(),
        act: (w) => create(w, 'a'),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: { code: 'conflict', fields: ['name'], uncertain: false },
      },
      {
        situation: 'a dry run: helm template only, nothing journaled or recorded',
        act: (w) => create(w, 'a', { dryRun: true }),
        helm: ['template a'],
        journal: [],
        agent: null,
        answer: { dryRun: true, agent: null, manifests: expect.stringContaining('name: a') },
      },
      {
        situation: 'the name of a deleted agent: the new one starts past its version',
        arrange: async (w) => {
          await seededTwice(w);
          await remove(w, 'a');
        },
        act: (w) => create(w, 'a'),
        helm: ['install a'],
        journal: [succeeded('create', 'create_agent', 'alice')],
        agent: { revision: 1, version: 4 },
      },
    ])('$situation', check);
  });

  describe('update', () => {
    it.each<Row>([
      {
        situation: 'the values change: helm upgrade, revision + 1, version + 1',
        arrange: seeded(),
        act: (w) => update(w, 'a', { description: 'v2' }),
        helm: ['upgrade a'],
        journal: [succeeded('update', 'update_agent', 'bob')],
        agent: { revision: 2, version: 2, helmRevision: 2 },
        answer: { changed: true, after: { description: 'v2' }, agent: { updatedBy: 'bob' } },
      },
      {
        situation: 'the same values: changed false, nothing journaled, no helm',
        arrange: seeded(),
        act: (w) => update(w, 'a', { toolset: ['preset:read-only'] }),
        ...noChange,
        agent: { revision: 1, version: 1 },
        answer: { changed: false },
      },
      {
        situation: 'the same values from another version of its blueprint: journaled, no helm, the origin moved, no revision',
        arrange: seeded(HELPER_V2),
        act: (w) => update(w, 'a', {}, HELPER_V3),
        helm: [],
        journal: [succeeded('update', 'update_agent', 'bob')],
        agent: { revision: 1, version: 1, origin: HELPER_V3 },
        answer: { changed: false, agent: { blueprint: HELPER_V3 } },
      },
      {
        situation: 'the same values from the version of its blueprint it holds: nothing journaled',
        arrange: seeded(HELPER_V2),
        act: (w) => update(w, 'a', {}, HELPER_V2),
        ...noChange,
        agent: { revision: 1, version: 1, origin: HELPER_V2 },
        answer: { changed: false },
      },
      {
        situation: 'a stale expectedVersion: 412 naming `expectedVersion`, before any helm',
        arrange: seededTwice,
        act: (w) => update(w, 'a', { description: 'v3', expectedVersion: 1 }),
        ...noChange,
        agent: { revision: 2, version: 2 },
        refusal: { code: 'precondition_failed', fields: ['expectedVersion'] },
      },
      {
        situation: 'a dry run: helm template only, nothing journaled',
        arrange: seeded(),
        act: (w) => update(w, 'a', { description: 'v2', dryRun: true }),
        helm: ['template a'],
        journal: [],
        agent: { revision: 1, version: 1 },
        answer: { dryRun: true, changed: true, after: { description: 'v2' } },
      },
      {
        situation: 'no such agent: 404',
        act: (w) => update(w, 'a', { description: 'v2' }),
        ...noChange,
        agent: null,
        refusal: { code: 'not_found' },
      },
    ])('$situation', check);
  });

  describe('delete', () => {
    it.each<Row>([
      {
        situation: 'an agent: helm uninstall, the record kept as deleted, version + 1',
        arrange: seeded(),
        act: (w) => remove(w, 'a'),
        helm: ['uninstall a'],
        journal: [succeeded('delete', 'delete_agent', 'dave')],
        agent: null,
        answer: { dryRun: false, releaseRemoved: true, deleted: { state: 'deleted', updatedBy: 'dave', version: 2 } },
      },
      {
        situation: 'a dry run: no helm, nothing journaled, the agent stays',
        arrange: seeded(),
        act: (w) => remove(w, 'a', { dryRun: true }),
        ...noChange,
        agent: { revision: 1, version: 1 },
        answer: { dryRun: true, releaseRemoved: false, deleted: { state: 'active' } },
      },
      {
        situation: 'a stale expectedVersion: 412',
        arrange: seededTwice,
        act: (w) => remove(w, 'a', { expectedVersion: 1 }),
        ...noChange,
        agent: { revision: 2, version: 2 },
        refusal: { code: 'precondition_failed', fields: ['expectedVersion'] },
      },
    ])('$situation', check);
  });

  describe('rollback', () => {
    it.each<Row>([
      {
        situation: 'to revision 1: one helm upgrade to its values, recorded as revision 3',
        arrange: seededTwice,
        act: (w) => rollback(w, 'a', { revision: 1 }),
        helm: ['upgrade a'],
        journal: [succeeded('rollback', 'rollback_agent', 'carol')],
        agent: { revision: 3, version: 3, helmRevision: 3 },
        answer: { rolledBackTo: 1, before: { description: 'v2' }, after: { description: '' }, agent: { updatedBy: 'carol' } },
      },
      {
        situation: 'a revision it does not have: 404 naming `revision`',
        arrange: seededTwice,
        act: (w) => rollback(w, 'a', { revision: 7 }),
        ...noChange,
        agent: { revision: 2, version: 2 },
        refusal: { code: 'not_found', fields: ['revision'] },
      },
      {
        situation: 'a dry run: rendered through the chart (helm template), nothing journaled',
        arrange: seededTwice,
        act: (w) => rollback(w, 'a', { revision: 1, dryRun: true }),
        helm: ['template a'],
        journal: [],
        agent: { revision: 2, version: 2 },
        answer: { dryRun: true, rolledBackTo: 1 },
      },
      {
        situation: 'freeing a release helm holds pending-upgrade: helm rollback, the interrupted write closed failed',
        arrange: interrupted('pending-upgrade'),
        act: (w) => rollback(w, 'a', { revision: 2, freeStuckRelease: true }),
        helm: ['status a', 'history a', 'rollback a', 'status a'],
        journal: [
          { kind: 'update', actor: 'erin', state: 'failed', errorMessage: expect.stringContaining('did not land') },
          succeeded('rollback', 'rollback_agent', 'carol'),
        ],
        agent: { revision: 3, version: 3, helmRevision: 4 },
        answer: { rolledBackTo: 2 },
      },
      {
        situation: 'helm holds the release pending-upgrade and the caller did not ask to free it: 409, the interrupted write stays pending',
        arrange: interrupted('pending-upgrade'),
        act: (w) => rollback(w, 'a', { revision: 1 }),
        helm: ['status a'],
        journal: [],
        agent: { revision: 2, version: 2 },
        refusal: { code: 'conflict', message: expect.stringContaining('freeStuckRelease') },
      },
    ])('$situation', check);
  });

  describe('adopt', () => {
    const installed = async (w: Parts, values: object = toChartValues(SPEC)) => {
      await w.helm.install(ref('a'), config.agentChart, values);
      await w.helm.upgradeInstall(ref('a'), config.agentChart, { ...values, description: 'v2' });
    };
    it.each<Row>([
      {
        situation: 'a deployed release of the agent chart: its helm history becomes revisions, no helm write',
        arrange: (w) => installed(w),
        act: (w) => adopt(w, 'a'),
        helm: ['status a', 'history a', 'values a r1', 'values a r2'],
        journal: [succeeded('create', 'adopt_agent', 'alice')],
        agent: { revision: 2, version: 1, helmRevision: 2 },
        answer: { dryRun: false, revisions: [{ revision: 1, helmRevision: 1, status: 'superseded' }, { revision: 2, helmRevision: 2, status: 'deployed' }] },
      },
      {
        situation: 'a release that is not deployed: 409, nothing journaled',
        arrange: async (w) => void w.helm.hold(ref('a'), 'failed', toChartValues(SPEC)),
        act: (w) => adopt(w, 'a', { status: 'failed' }),
        helm: ['status a'],
        journal: [],
        agent: null,
        refusal: { code: 'conflict', message: expect.stringContaining('is failed') },
      },
      {
        situation: 'a release without a toolset (a legacy agent): 409 naming `toolset`, nothing journaled',
        arrange: async (w) => {
          const { toolset: _none, ...legacy } = toChartValues(SPEC);
          await installed(w, legacy);
        },
        act: (w) => adopt(w, 'a'),
        helm: ['status a', 'history a', 'values a r1', 'values a r2'],
        journal: [],
        agent: null,
        refusal: { code: 'conflict', fields: ['toolset'] },
      },
      {
        situation: 'an agent the store holds already: 409 before helm',
        arrange: seeded(),
        act: (w) => adopt(w, 'a'),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: { code: 'conflict' },
      },
      {
        situation: 'no release: 404',
        act: (w) => adopt(w, 'a'),
        helm: ['status a'],
        journal: [],
        agent: null,
        refusal: { code: 'not_found' },
      },
      {
        situation: 'a dry run: the revisions it would take, nothing journaled',
        arrange: (w) => installed(w),
        act: (w) => adopt(w, 'a', {}, true),
        helm: ['status a', 'history a', 'values a r1', 'values a r2'],
        journal: [],
        agent: null,
        answer: { dryRun: true, agent: null, revisions: [{ revision: 1 }, { revision: 2 }] },
      },
    ])('$situation', check);
  });

  describe('reconcile action', () => {
    const RECONCILER = 'reconciler@replica-a';
    /** A create journaled with its intent and left pending (its replica stopped), yet helm deployed it. */
    const deployedAfterAll = async (w: Parts) => {
      const values = toChartValues(SPEC);
      await w.store.startOperation({ id: 'op-create', kind: 'create', ...ref('a'), request: SPEC, actor: 'alice', owner: 'replica-a', intent: { spec: SPEC, values, origin: HELPER_V2 }, baseHelmRevision: null });
      await w.helm.install(ref('a'), config.agentChart, values);
    };
    const intentOf = async (w: Parts): Promise<Decided> => {
      const op = (await w.store.operation('op-create'))!;
      return { action: { action: 'record-create' }, agent: null, intent: { ...op.intent!, operationId: op.id, state: op.state } };
    };
    it.each<Row>([
      {
        situation: 'none: the item answered, nothing journaled, no helm',
        arrange: seeded(),
        act: (w) => reconcile(w, 'a', decided({ action: 'none' })),
        ...noChange,
        agent: { revision: 1, version: 1 },
        answer: { action: 'none', done: false },
      },
      {
        situation: 'report: the finding answered, nothing journaled, no helm',
        arrange: seeded(),
        act: (w) => reconcile(w, 'a', decided({ action: 'report', finding: 'drift', why: 'drifted' })),
        ...noChange,
        agent: { revision: 1, version: 1 },
        answer: { action: 'report', finding: 'drift', done: false },
      },
      {
        situation: 'uninstall of a half-release: journaled as a delete by the reconciler, helm uninstall, the operation succeeded',
        arrange: async (w) => void w.helm.hold(ref('a'), 'pending-install', toChartValues(SPEC)),
        act: (w) => reconcile(w, 'a', decided({ action: 'uninstall', why: 'it created nothing' })),
        helm: ['uninstall a'],
        journal: [succeeded('delete', 'reconcile_agents', RECONCILER)],
        agent: null,
        answer: { action: 'uninstall', done: true },
      },
      {
        situation: 'uninstall, dry run: planned, nothing journaled, no helm',
        arrange: async (w) => void w.helm.hold(ref('a'), 'pending-install', toChartValues(SPEC)),
        act: (w) => reconcile(w, 'a', decided({ action: 'uninstall', why: 'it created nothing' }), true),
        ...noChange,
        agent: null,
        answer: { action: 'uninstall', done: false },
      },
      {
        situation: 'record-create of a pending create helm deployed: recorded with its blueprint by the reconciler, the pending create closed',
        arrange: deployedAfterAll,
        act: (w) => reconcile(w, 'a', intentOf),
        helm: ['status a'],
        journal: [
          { kind: 'create', actor: 'alice', state: 'failed' },
          succeeded('create', 'reconcile_agents', RECONCILER),
        ],
        agent: { revision: 1, version: 1, helmRevision: 1, origin: HELPER_V2 },
        answer: { action: 'record-create', done: true },
      },
      {
        situation: 'the service lock refused (a write holds the agent): AgentBusy, nothing journaled, no helm',
        arrange: async (w) => {
          await seeded()(w);
          w.lock.busy.add('ns/a');
        },
        act: (w) => reconcile(w, 'a', decided({ action: 'uninstall', why: 'never reached' })),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: { code: 'conflict', busy: true },
      },
    ])('$situation', check);

    it('takes the agent as the service takes it, not as a caller write', async () => {
      const w = parts();
      await reconcile(w, 'a', decided({ action: 'none' }));
      expect(w.lock.holds).toEqual(['service ns/a']);
    });

    it('hands the create\'s idempotency keys to the operation that recorded it', async () => {
      const w = parts();
      await deployedAfterAll(w);
      await reconcile(w, 'a', intentOf);
      const recorded = w.store.journal(ref('a')).at(-1)!;
      expect(w.store.relinked).toEqual([{ from: 'op-create', to: recorded.id }]);
    });
  });

  describe('a release Flux or Argo CD owns (docs/contract.md §13)', () => {
    const owned = { code: 'gitops_owned', fields: ['owner'], uncertain: false, message: expect.stringContaining('managed by Flux HelmRelease flux-apps/agents') };
    it.each<Row>([
      {
        situation: 'update: 409 gitops_owned naming the HelmRelease, nothing journaled, no helm',
        arrange: fluxTakesOver(seeded()),
        act: (w) => update(w, 'a', { description: 'v2' }),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: owned,
      },
      {
        situation: 'delete: refused alike',
        arrange: fluxTakesOver(seeded()),
        act: (w) => remove(w, 'a'),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: owned,
      },
      {
        situation: 'rollback: refused alike',
        arrange: fluxTakesOver(seededTwice),
        act: (w) => rollback(w, 'a', { revision: 1 }),
        ...noChange,
        agent: { revision: 2, version: 2 },
        refusal: owned,
      },
      {
        situation: 'adopt: refused alike, after its own checks read the release',
        arrange: async (w) => {
          await w.helm.install(ref('a'), config.agentChart, toChartValues(SPEC));
          w.owners.metadata = FLUX_LABELS;
        },
        act: (w) => adopt(w, 'a'),
        helm: ['status a', 'history a', 'values a r1'],
        journal: [],
        agent: null,
        refusal: owned,
      },
      {
        situation: 'a reconcile action: refused alike',
        arrange: fluxTakesOver(seeded()),
        act: (w) => reconcile(w, 'a', decided({ action: 'uninstall', why: 'a half-release' })),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: owned,
      },
      {
        situation: 'a stale version: 412 first, as without an owner',
        arrange: fluxTakesOver(seeded()),
        act: (w) => update(w, 'a', { description: 'v2', expectedVersion: 7 }),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: { code: 'precondition_failed' },
      },
      {
        situation: 'an update that changes nothing answers unchanged, as before',
        arrange: fluxTakesOver(seeded()),
        act: (w) => update(w, 'a', { modelConfig: 'm' }),
        ...noChange,
        agent: { revision: 1, version: 1 },
        answer: { changed: false },
      },
      {
        situation: 'a dry run answers (helm template only), warning that the write would be refused',
        arrange: fluxTakesOver(seeded()),
        act: (w) => update(w, 'a', { description: 'v2', dryRun: true }),
        helm: ['template a'],
        journal: [],
        agent: { revision: 1, version: 1 },
        answer: { dryRun: true, changed: true, warnings: [{ path: 'owner', message: expect.stringMatching(/^the write would be refused \(gitops_owned\): agent ns\/a is managed by Flux HelmRelease flux-apps\/agents/) }] },
      },
      {
        situation: 'Argo CD let go (its annotation removed): the next write runs',
        arrange: async (w) => {
          await seeded()(w);
          w.owners.metadata = { annotations: { 'argocd.argoproj.io/tracking-id': 'agents:kagent.dev/Agent:ns/a' } };
          await expect(update(w, 'a', { description: 'refused' })).rejects.toMatchObject({ code: 'gitops_owned' });
          w.owners.metadata = { annotations: {} };
        },
        act: (w) => update(w, 'a', { description: 'v2' }),
        helm: ['upgrade a'],
        journal: [succeeded('update', 'update_agent', 'bob')],
        agent: { revision: 2, version: 2 },
      },
    ])('$situation', check);

    it('a create does not ask (helm refuses a name whose release exists)', async () => {
      const w = parts();
      w.owners.metadata = FLUX_LABELS;
      await create(w, 'a');
      expect(w.owners.asked).toBe(0);
      await update(w, 'a', { description: 'v2' }).catch(() => undefined);
      expect(w.owners.asked).toBe(1);
    });
  });

  describe("the runner's own failures", () => {
    it.each<Row>([
      {
        situation: 'helm fails: the operation closed failed with helm\'s message, an UncertainWrite (backend_error), the agent as it was',
        arrange: async (w) => {
          await seeded()(w);
          w.helm.failNext = new AppError('backend_error', 'helm upgrade failed: the cluster is gone');
        },
        act: (w) => update(w, 'a', { description: 'never' }),
        helm: ['upgrade a'],
        journal: [{ kind: 'update', operation: 'update_agent', actor: 'bob', state: 'failed', errorMessage: 'helm upgrade failed: the cluster is gone' }],
        agent: { revision: 1, version: 1 },
        refusal: { code: 'backend_error', uncertain: true, message: 'helm upgrade failed: the cluster is gone' },
      },
      {
        situation: 'helm refuses (a release of that name exists): the create closed failed, a plain 409, no agent',
        arrange: async (w) => void (await w.helm.install(ref('a'), config.agentChart, {})),
        act: (w) => create(w, 'a'),
        helm: ['install a'],
        journal: [{ kind: 'create', operation: 'create_agent', actor: 'alice', state: 'failed', errorMessage: expect.stringContaining('already exists') }],
        agent: null,
        refusal: { code: 'conflict', uncertain: false },
      },
      {
        situation: 'recording fails: the operation stays pending, the caller told helm applied it',
        arrange: async (w) => {
          await seeded()(w);
          w.store.failNextRecord = new Error('SQLITE_IOERR: disk I/O error (a FAKE store failure)');
        },
        act: (w) => update(w, 'a', { description: 'v2' }),
        helm: ['upgrade a'],
        journal: [{ kind: 'update', operation: 'update_agent', actor: 'bob', state: 'pending' }],
        agent: { revision: 1, version: 1 },
        refusal: {
          code: 'backend_error', uncertain: true,
          message: expect.stringMatching(/^helm applied the update of ns\/a \(release revision 2\), but recording it in the store failed \(SQLITE_IOERR.*stays pending/),
        },
      },
      {
        situation: 'the lock lost before recording: nothing recorded, the operation stays pending, the caller told so',
        arrange: async (w) => {
          await seeded()(w);
          w.lock.loseNext = true;
        },
        act: (w) => update(w, 'a', { description: 'v2' }),
        helm: ['upgrade a'],
        journal: [{ kind: 'update', operation: 'update_agent', actor: 'bob', state: 'pending' }],
        agent: { revision: 1, version: 1 },
        refusal: { code: 'backend_error', uncertain: true, message: expect.stringContaining('lost its lock on the agent before recording it') },
      },
      {
        situation: 'a write a dead replica left pending that did not land: closed failed first, then the write runs',
        arrange: interrupted('deployed'),
        act: (w) => update(w, 'a', { description: 'v4' }),
        helm: ['status a', 'upgrade a'],
        journal: [
          { kind: 'update', actor: 'erin', state: 'failed', errorMessage: expect.stringContaining('did not land') },
          succeeded('update', 'update_agent', 'bob'),
        ],
        agent: { revision: 3, version: 3 },
      },
      {
        situation: 'shutting down: 503, nothing journaled, no helm',
        arrange: async (w) => {
          await seeded()(w);
          await w.gate.drain(0);
        },
        act: (w) => update(w, 'a', { description: 'v2' }),
        ...noChange,
        agent: { revision: 1, version: 1 },
        refusal: { code: 'unavailable' },
      },
    ])('$situation', check);
  });
});
