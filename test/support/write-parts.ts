// The agents module's write side wired by hand, as AgentsModule wires it, for suites that drive it
// without Nest: one place to follow when a constructor changes.
import type { AppConfig } from '@app/common';
import { HelmReleases, type ChartSources, type HelmClient } from '@app/helm';
import type { Store } from '@app/store';
import { AgentLeaseRepository } from '../../libs/agents/src/persistence/lease.repository.js';
import { AgentsRepository } from '../../libs/agents/src/persistence/agents.repository.js';
import { IdempotencyRepository } from '../../libs/agents/src/persistence/idempotency.repository.js';
import type { LiveAgents } from '../../libs/agents/src/runner/ports.js';
import type { ManifestReader } from '../../libs/agents/src/cluster/manifest-reader.js';
import { OperationRecovery } from '../../libs/agents/src/application/operation-recovery.service.js';
import { Reconciler } from '../../libs/agents/src/reconcile/reconcile.service.js';
import { AgentLock } from '../../libs/agents/src/runner/agent-lock.js';
import { IdempotencyGate } from '../../libs/agents/src/runner/idempotency-gate.js';
import { ShutdownGate } from '../../libs/agents/src/runner/shutdown-gate.js';
import { WriteRunner } from '../../libs/agents/src/runner/write-runner.js';

export interface WritePartsOptions {
  /** A repository of the suite's own (one that fails on demand). */
  repository?: AgentsRepository;
  /** Lease rows of the suite's own (counting or skewed). */
  leases?: AgentLeaseRepository;
  /** Where the chart comes from, given to the runner and recovery alike; without it, AGENT_CHART as configured. */
  charts?: ChartSources;
}

export function writeParts(config: AppConfig, store: Store, helm: HelmClient, options: WritePartsOptions = {}) {
  const repository = options.repository ?? new AgentsRepository(store);
  const leases = options.leases ?? new AgentLeaseRepository(store);
  const lock = new AgentLock(config, leases, store);
  const keys = new IdempotencyGate(config, new IdempotencyRepository(store));
  const recovery = new OperationRecovery(config, repository, lock, helm, keys, options.charts);
  const runner = new WriteRunner(config, repository, helm, new ShutdownGate(), lock, keys, recovery, options.charts);
  /** The reconciler over these parts, with the cluster reads the suite gives it. */
  const reconciler = (kube: LiveAgents, manifests: ManifestReader) => new Reconciler(config, repository, helm, new HelmReleases(helm), kube, recovery, runner, manifests);
  return { repository, leases, lock, keys, recovery, runner, reconciler };
}
