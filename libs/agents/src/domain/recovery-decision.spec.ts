import { describe, expect, it } from '@jest/globals';
import type { LiveAgent } from '@app/kube';
import { foldStatus } from './agent-status.js';
import { toChartValues } from './agent-spec.js';
import { decideReconcile, decideRecovery, type InterruptedWrite, type ReconcileAction, type RecoveryDecision, type ReleaseSide, type ReleaseState, type StoreSide } from './recovery-decision.js';

const intended = toChartValues({ modelConfig: 'm', toolset: ['preset:read-only'] });
const other = toChartValues({ modelConfig: 'm', toolset: ['preset:none'] });
const write = (over: Partial<InterruptedWrite>): InterruptedWrite => ({ kind: 'update', baseHelmRevision: 2, values: intended, agent: 'active', nameTaken: false, ...over });
const release = (status: string, revision: number, values: object = intended): ReleaseState => ({ status, revision, values: { ...values } });

describe(decideRecovery.name, () => {
  it.each<[string, InterruptedWrite, ReleaseState | null, RecoveryDecision]>([
    ['a create helm deployed with its values is recorded', write({ kind: 'create', baseHelmRevision: null, agent: 'none' }), release('deployed', 1), { action: 'record', what: 'create' }],
    ['a create whose name another agent took meanwhile fails', write({ kind: 'create', baseHelmRevision: null, agent: 'none', nameTaken: true }), release('deployed', 1), { action: 'fail', why: 'another agent of this name was recorded meanwhile' }],
    ['a create with no release did not land', write({ kind: 'create', baseHelmRevision: null, agent: 'none' }), null, { action: 'fail', why: 'there is no release' }],
    ['a create helm holds pending-install waits', write({ kind: 'create', baseHelmRevision: null, agent: 'none' }), release('pending-install', 1), { action: 'wait', heldPending: 'pending-install', revision: 1 }],
    ['an update deployed after its base with its values is recorded', write({}), release('deployed', 3), { action: 'record', what: 'change' }],
    ['an update whose release still shows the base revision did not land', write({}), release('deployed', 2), { action: 'fail', why: 'the release holds revision 2 (deployed) with other values' }],
    ['an update whose release holds other values did not land', write({}), release('deployed', 3, other), { action: 'fail', why: 'the release holds revision 3 (deployed) with other values' }],
    ['an update helm rolled back (failed) did not land', write({}), release('failed', 3), { action: 'fail', why: 'the release holds revision 3 (failed) with other values' }],
    ['an update helm holds pending-upgrade waits', write({}), release('pending-upgrade', 3), { action: 'wait', heldPending: 'pending-upgrade', revision: 3 }],
    ['an update of an agent deleted meanwhile fails', write({ agent: 'inactive' }), release('deployed', 3), { action: 'fail', why: 'the agent is no longer active' }],
    ['a rollback that landed is recorded as a change', write({ kind: 'rollback' }), release('deployed', 4), { action: 'record', what: 'change' }],
    ['a rollback helm holds pending-rollback waits', write({ kind: 'rollback' }), release('pending-rollback', 4), { action: 'wait', heldPending: 'pending-rollback', revision: 4 }],
    ['a delete whose release is gone is recorded', write({ kind: 'delete', values: null }), null, { action: 'record', what: 'delete' }],
    ['a delete whose release is still installed did not land', write({ kind: 'delete', values: null }), release('deployed', 2), { action: 'fail', why: 'the release is still installed' }],
    ['a delete of an agent already gone fails', write({ kind: 'delete', values: null, agent: 'inactive' }), null, { action: 'fail', why: 'the agent was already gone' }],
    [
      'a delete whose helm uninstall was cut off says to delete again',
      write({ kind: 'delete', values: null }),
      release('uninstalling', 2),
      { action: 'fail', why: 'helm left the release uninstalling (its uninstall was cut off, the Agent may be gone already): delete the agent again to finish it' },
    ],
    ['a delete helm holds pending waits', write({ kind: 'delete', values: null }), release('pending-upgrade', 3), { action: 'wait', heldPending: 'pending-upgrade', revision: 3 }],
  ])('%s', (_case, interrupted, state, expected) => {
    expect(decideRecovery(interrupted, state)).toEqual(expected);
  });
});

/** The Agent the chart renders for `intended`-like values (what the release applied). */
const applied: LiveAgent = {
  metadata: { name: 'a', namespace: 'n', labels: { team: 'sre', 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { note: 'n', 'agent-manager.giantswarm.io/display-name': 'D' } },
  spec: {
    type: 'Declarative',
    description: 'd',
    declarative: {
      systemMessage: 's',
      modelConfig: 'm',
      tools: [{ type: 'McpServer', mcpServer: { kind: 'RemoteMCPServer', apiGroup: 'kagent.dev', name: 'muster' }, headersFrom: [{ name: 'X-Muster-Toolset', value: 'preset:read-only' }] }],
    },
  },
};

describe(decideReconcile.name, () => {
  const recorded = (values: object = intended): StoreSide => ({ agent: { helmRevision: 2, values: toChartValues(values as never) }, createIntent: null });
  const intent: StoreSide = { agent: null, createIntent: intended };
  const nothing: StoreSide = { agent: null, createIntent: null };
  const helm = (status: string, revision: number, lastDeployed: number | null, values: object = intended): ReleaseSide => ({ ...release(status, revision, values), lastDeployed, agent: applied });

  it.each<[string, StoreSide, ReleaseSide | null, boolean, ReconcileAction]>([
    ['store, release and Agent agree', recorded(), helm('deployed', 2, 2), true, { action: 'none' }],
    ['a create that landed but was recorded failed or pending is recorded', intent, helm('deployed', 1, 1), true, { action: 'record-create' }],
    ['pending-install with no Agent and no record is uninstalled', intent, helm('pending-install', 1, null), false, { action: 'uninstall', why: 'helm left the install pending and it created nothing' }],
    ['pending-install with no Agent and no intent is uninstalled', nothing, helm('pending-install', 1, null), false, { action: 'uninstall', why: 'helm left the install pending and it created nothing' }],
    ['pending-install with a live Agent and a store intent is installed again from the intent', intent, helm('pending-install', 1, null), true, { action: 'reinstall', from: 'intent' }],
    ['pending-install with a live Agent and no intent is uninstalled', nothing, helm('pending-install', 1, null), true, { action: 'uninstall', why: 'helm left the install pending and the store holds no create of it' }],
    ['pending-install of a recorded agent is installed again from the record', recorded(), helm('pending-install', 1, null), false, { action: 'reinstall', from: 'record' }],
    ['pending-upgrade goes back to the last deployed revision', recorded(), helm('pending-upgrade', 3, 2), true, { action: 'rollback', to: 2 }],
    ['pending-rollback goes back to the last deployed revision', recorded(), helm('pending-rollback', 4, 2), true, { action: 'rollback', to: 2 }],
    ['pending-upgrade with nothing deployed before is reported', recorded(), helm('pending-upgrade', 2, null), true, { action: 'report', finding: 'failed', why: 'helm holds the release pending-upgrade with no deployed revision to return to' }],
    ['a release deleted by hand marks the agent missing', recorded(), null, false, { action: 'report', finding: 'missing', why: 'the helm release was removed outside agent-manager: delete the agent, or roll it back to re-install it' }],
    ['values changed by hand are drift, reported not overwritten', recorded(), helm('deployed', 3, 3, other), true, { action: 'report', finding: 'drift', why: 'drifted from what agent-manager applied at revision 3 (release values differ from the store in toolset): update or roll back the agent to re-apply it' }],
    ['a live Agent deleted by hand is reported', recorded(), helm('deployed', 2, 2), false, { action: 'report', finding: 'no-live-object', why: 'the Agent was deleted outside agent-manager: an update or rollback applies it again' }],
    ['a failed release of a recorded agent is reported', recorded(), helm('failed', 3, 2), true, { action: 'report', finding: 'failed', why: 'helm reports the release failed (revision 3)' }],
    ['a release the store does not know is offered for adoption', nothing, helm('deployed', 1, 1), true, { action: 'report', finding: 'unmanaged', why: 'a release of the agent chart the store does not know: adopt it (POST /api/v1/agents/adopt, adopt_agent)' }],
    ['a release whose values differ from the failed create is not taken for it', intent, helm('deployed', 1, 1, other), true, { action: 'report', finding: 'unmanaged', why: 'a release of the agent chart the store does not know: adopt it (POST /api/v1/agents/adopt, adopt_agent)' }],
    ['a failed release the store does not know is reported', nothing, helm('failed', 1, null), false, { action: 'report', finding: 'failed', why: 'a release of the agent chart the store does not know is failed' }],
    ['no release and no record: nothing to do', intent, null, false, { action: 'none' }],
  ])('%s', (_case, store, state, exists, expected) => {
    expect(decideReconcile(store, state, exists ? applied : null)).toEqual(expected);
  });
});

/**
 * One drift verdict (issue 24 item 7): a hand edit of each field the chart sets, on the live Agent or
 * on the release, is drift to status and to the reconciler alike; fields the server adds are not.
 */
describe('drift: status and the reconciler agree', () => {
  const values = toChartValues({ modelConfig: 'm', toolset: ['preset:read-only'], systemMessage: 's', description: 'd', displayName: 'D', labels: { team: 'sre' }, annotations: { note: 'n' } });
  const store: StoreSide = { agent: { helmRevision: 2, values }, createIntent: null };
  const edit = (change: (agent: LiveAgent) => void): LiveAgent => {
    const agent = structuredClone(applied);
    change(agent);
    return agent;
  };
  const declarative = (agent: LiveAgent) => (agent.spec as { declarative: Record<string, any> }).declarative;
  const status = (releaseValues: Record<string, unknown>, liveAgent: LiveAgent | null) =>
    foldStatus({ namespace: 'n', name: 'a', storeRevision: 2, storeValues: { ...values }, release: { status: 'deployed', revision: 2 }, releaseValues, appliedAgent: applied, liveAgent });
  const reconcile = (releaseValues: Record<string, unknown>, liveAgent: LiveAgent | null) =>
    decideReconcile(store, { status: 'deployed', revision: 2, values: releaseValues, lastDeployed: 2, agent: applied }, liveAgent);

  it.each<[string, LiveAgent, string]>([
    ['modelConfig', edit((a) => (declarative(a).modelConfig = 'hand-edited')), 'spec.declarative.modelConfig'],
    ['systemMessage', edit((a) => (declarative(a).systemMessage = 'hand-edited')), 'spec.declarative.systemMessage'],
    ['description', edit((a) => ((a.spec as Record<string, unknown>).description = 'hand-edited')), 'spec.description'],
    ['toolset (the X-Muster-Toolset header)', edit((a) => (declarative(a).tools[0].headersFrom[0].value = 'preset:full')), 'spec.declarative.tools'],
    ['tools removed', edit((a) => (declarative(a).tools = [])), 'spec.declarative.tools'],
    ['displayName (its annotation)', edit((a) => (a.metadata.annotations!['agent-manager.giantswarm.io/display-name'] = 'X')), 'metadata.annotations.agent-manager.giantswarm.io/display-name'],
    ['a label', edit((a) => (a.metadata.labels!.team = 'other')), 'metadata.labels.team'],
    ['a label removed', edit((a) => delete a.metadata.labels!.team), 'metadata.labels.team'],
    ['an annotation', edit((a) => (a.metadata.annotations!.note = 'x')), 'metadata.annotations.note'],
  ])('the live Agent: %s edited by hand', (_field, liveAgent, path) => {
    const folded = status({ ...values }, liveAgent);
    expect(folded).toMatchObject({ verdict: 'failed', drift: [expect.stringContaining(path)] });
    expect(reconcile({ ...values }, liveAgent)).toEqual({ action: 'report', finding: 'drift', why: expect.stringContaining(folded.drift[0]) });
  });

  it.each(['modelConfig', 'toolset', 'systemMessage', 'description', 'displayName', 'labels', 'annotations'])('the release: %s changed by hand (helm upgrade --reuse-values)', (key) => {
    const releaseValues = { ...values, [key]: key === 'toolset' ? ['preset:full'] : key === 'labels' || key === 'annotations' ? { other: 'x' } : 'hand-edited' };
    const folded = status(releaseValues, applied);
    expect(folded).toMatchObject({ verdict: 'failed', drift: [`release values differ from the store in ${key}`] });
    expect(reconcile(releaseValues, applied)).toEqual({ action: 'report', finding: 'drift', why: expect.stringContaining(folded.drift[0]) });
  });

  it('fields the API server or kagent add (status, generation, defaults) are no drift to either', () => {
    const served = edit((a) => {
      a.metadata.generation = 3;
      a.metadata.labels!['added-by'] = 'kubectl';
      declarative(a).stream = true;
      a.status = { conditions: [{ type: 'Ready', status: 'True' }] };
    });
    expect(status({ ...values }, served).drift).toEqual([]);
    expect(reconcile({ ...values }, served)).toEqual({ action: 'none' });
  });

  it('an Agent deleted by hand: status says missing, the reconciler reports it', () => {
    expect(status({ ...values }, null).drift).toEqual(['Agent: missing from the cluster']);
    expect(reconcile({ ...values }, null)).toMatchObject({ action: 'report', finding: 'no-live-object' });
  });
});
