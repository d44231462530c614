import { describe, expect, it } from '@jest/globals';
import type { LiveAgent } from '@app/kube';
import type { StoreSideRow } from '../persistence/agents.repository.js';
import type { ChartValues } from '../domain/agent-spec.js';
import { triage, type Triage } from './fleet-reconciler.js';
import type { WatchedRelease } from './watched-fleet.js';

const values = { modelConfig: 'default', toolset: ['preset:read-only'] } as unknown as ChartValues;
const record = (helmRevision: number | null, v: ChartValues = values): StoreSideRow => ({ namespace: 'ns', name: 'a', helmRevision, values: v });
const release = (revision: number, status = 'deployed', v: Record<string, unknown> = values as unknown as Record<string, unknown>): WatchedRelease => ({
  namespace: 'ns', name: 'a', revision, status, chart: 'agent-0.6.0', values: v, manifest: 'kind: Agent', lastDeployed: status === 'deployed' ? revision : revision - 1,
});
const agent = (description = 'triage'): LiveAgent => ({ metadata: { name: 'a', namespace: 'ns', labels: { tier: 'gold' } }, spec: { description } });

/** What the watches alone tell the reconciler: only `agree` costs nothing; the rest is decided again from helm and the cluster. */
const rows: [string, StoreSideRow | null, WatchedRelease | null, LiveAgent | null, LiveAgent | null, Triage][] = [
  ['nothing anywhere', null, null, null, null, 'agree'],
  ['record, release and live Agent agree', record(2), release(2), agent(), agent(), 'agree'],
  ['the store recorded a revision the view has not seen yet (another replica wrote)', record(3), release(2), agent(), agent(), 'stale'],
  ['the release holds values the store does not', record(2), release(2, 'deployed', { modelConfig: 'other' }), agent(), agent(), 'check'],
  ['the live Agent was edited by hand', record(2), release(2), agent(), agent('edited'), 'check'],
  ['the live Agent is gone', record(2), release(2), agent(), null, 'check'],
  ['helm holds the release pending-upgrade', record(2), release(3, 'pending-upgrade'), null, agent(), 'check'],
  ['helm holds an install pending', null, release(1, 'pending-install'), null, null, 'check'],
  ['a release the store does not know', null, release(1), agent(), agent(), 'check'],
  ['the release was removed outside agent-manager', record(2), null, null, agent(), 'check'],
  ['the release failed', record(2), release(3, 'failed'), null, agent(), 'check'],
  ['a store revision ahead of the view wins over any other difference', record(4), release(3, 'pending-upgrade'), null, null, 'stale'],
];

describe('FleetReconciler triage', () => {
  it.each(rows)('%s', (_why, stored, watched, applied, live, expected) => {
    expect(triage(stored, watched, applied, live)).toBe(expected);
  });
});
