import { describe, expect, it } from '@jest/globals';
import { toChartValues } from './agents.types.js';
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

describe(decideReconcile.name, () => {
  const recorded = (values: object = intended): StoreSide => ({ agent: { helmRevision: 2, values: toChartValues(values as never) }, createIntent: null });
  const intent: StoreSide = { agent: null, createIntent: intended };
  const nothing: StoreSide = { agent: null, createIntent: null };
  const helm = (status: string, revision: number, lastDeployed: number | null, values: object = intended): ReleaseSide => ({ ...release(status, revision, values), lastDeployed });

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
    ['values changed by hand are drift, reported not overwritten', recorded(), helm('deployed', 3, 3, other), true, { action: 'report', finding: 'drift', why: "the release's values (revision 3) were changed outside agent-manager" }],
    ['a live Agent deleted by hand is reported', recorded(), helm('deployed', 2, 2), false, { action: 'report', finding: 'no-live-object', why: 'the Agent was deleted outside agent-manager: an update or rollback applies it again' }],
    ['a failed release of a recorded agent is reported', recorded(), helm('failed', 3, 2), true, { action: 'report', finding: 'failed', why: 'helm reports the release failed (revision 3)' }],
    ['a release the store does not know is offered for adoption', nothing, helm('deployed', 1, 1), true, { action: 'report', finding: 'unmanaged', why: 'a release of the agent chart the store does not know: adopt it (POST /api/v1/agents/adopt, adopt_agent)' }],
    ['a release whose values differ from the failed create is not taken for it', intent, helm('deployed', 1, 1, other), true, { action: 'report', finding: 'unmanaged', why: 'a release of the agent chart the store does not know: adopt it (POST /api/v1/agents/adopt, adopt_agent)' }],
    ['a failed release the store does not know is reported', nothing, helm('failed', 1, null), false, { action: 'report', finding: 'failed', why: 'a release of the agent chart the store does not know is failed' }],
    ['no release and no record: nothing to do', intent, null, false, { action: 'none' }],
  ])('%s', (_case, store, state, live, expected) => {
    expect(decideReconcile(store, state, live)).toEqual(expected);
  });
});
