import { describe, expect, it } from '@jest/globals';
import { toChartValues } from './agents.types.js';
import { decideRecovery, type InterruptedWrite, type RecoveryDecision, type ReleaseState } from './recovery-decision.js';

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
    ['a delete helm holds pending waits', write({ kind: 'delete', values: null }), release('pending-upgrade', 3), { action: 'wait', heldPending: 'pending-upgrade', revision: 3 }],
  ])('%s', (_case, interrupted, state, expected) => {
    expect(decideRecovery(interrupted, state)).toEqual(expected);
  });
});
