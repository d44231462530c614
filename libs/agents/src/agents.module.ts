import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { HelmClient, HelmModule, HelmReleases } from '@app/helm';
import { ClusterState, KubeModule } from '@app/kube';
import { AppConfig } from '@app/common';
import { McpModule } from '@app/mcp';
import { Metrics } from '@app/telemetry';
import { AgentLeaseRepository } from './persistence/lease.repository.js';
import { AgentsRepository } from './persistence/agents.repository.js';
import { IdempotencyRepository } from './persistence/idempotency.repository.js';
import { OperationRecovery } from './application/operation-recovery.service.js';
import { AgentsService } from './application/agents.service.js';
import { RevisionDiffs } from './application/revision-diffs.service.js';
import { ManifestReader } from './cluster/manifest-reader.js';
import { ReleaseOwners } from './cluster/release-owners.js';
import { FleetView } from './cluster/fleet-view.js';
import { AgentsTools } from './api/agents.tools.js';
import { AGENT_OPERATIONS } from './api/agents.operations.js';
import { AgentAccess, contributedOperations, OperationDoors, RefusalJournal, restControllers } from '@app/doors';
import { ServiceInfoService } from './application/service-info.service.js';
import { AgentLock } from './runner/agent-lock.js';
import { IdempotencyGate } from './runner/idempotency-gate.js';
import { ShutdownGate } from './runner/shutdown-gate.js';
import { WriteRunner } from './runner/write-runner.js';
import { Reconciler } from './reconcile/reconcile.service.js';
import { FleetReconciler } from './reconcile/fleet-reconciler.js';
import { WATCHED_FLEET } from './reconcile/watched-fleet.js';
import { RECONCILE_OPERATIONS } from './reconcile/reconcile.operations.js';
import { FleetRollouts } from './rollout/rollouts.service.js';
import { RolloutsRepository } from './rollout/rollouts.repository.js';
import { ROLLOUT_OPERATIONS } from './rollout/rollouts.operations.js';
import { PRESET_OPERATIONS } from './presets/presets.operations.js';
import { PresetSource } from './presets/preset-source.js';
import { MODEL_CONFIG_OPERATIONS } from './model-configs/model-configs.operations.js';
import { ModelConfigCheck } from './model-configs/model-config-check.js';
import { ModelConfigsService } from './model-configs/model-configs.service.js';
import { CHANGE_OPERATIONS } from './changes/changes.operations.js';
import { ChangeGate } from './changes/change-gate.js';
import { ChangesRepository } from './changes/changes.repository.js';
import { ChangesService } from './changes/changes.service.js';
import { EVENT_OPERATIONS } from './events/events.operations.js';
import { EventsRepository } from './events/events.repository.js';
import { ChangeEvents } from './events/events.service.js';
import { WebhookDispatcher } from './events/webhook-dispatcher.js';

/**
 * The operation sets this module serves beside the agent operations (AgentsTools contributes those
 * at init), in the order their toolsets are listed.
 */
const CONTRIBUTED_SETS = [RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS, PRESET_OPERATIONS, MODEL_CONFIG_OPERATIONS, CHANGE_OPERATIONS, EVENT_OPERATIONS];

/** One manifest reader (one worker thread) for status reads and the reconciler; it ends with the module. */
const manifestReader = { provide: ManifestReader, useFactory: () => new ManifestReader() };

/** The watched view of the agent releases and live Agents; its owner starts it, the module's end stops it. */
const fleetView = {
  provide: FleetView,
  inject: [ClusterState, AppConfig],
  useFactory: (cluster: ClusterState, config: AppConfig) => new FleetView(cluster, config.KUBECONFIG),
};

const helmReleases = {
  provide: HelmReleases,
  inject: [HelmClient],
  useFactory: (helm: HelmClient) => new HelmReleases(helm),
};

/** The journal's operations by state, counted by the store at each scrape. */
@Injectable()
class JournalMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly repository: AgentsRepository,
  ) {}

  onModuleInit(): void {
    this.metrics.watchJournal(() => this.repository.countOperationsByState());
  }
}

@Module({
  imports: [HelmModule, KubeModule, McpModule],
  controllers: [...restControllers(AGENT_OPERATIONS), ...CONTRIBUTED_SETS.flatMap(restControllers)],
  providers: [AgentsService, RevisionDiffs, AgentsRepository, ServiceInfoService, AgentLeaseRepository, IdempotencyRepository, ShutdownGate, AgentLock, IdempotencyGate, OperationRecovery, WriteRunner, ReleaseOwners, AgentsTools, helmReleases, manifestReader, fleetView, { provide: WATCHED_FLEET, useExisting: FleetView }, Reconciler, FleetReconciler, FleetRollouts, RolloutsRepository, JournalMetrics, PresetSource, AgentAccess, OperationDoors, { provide: RefusalJournal, useExisting: AgentsRepository }, ModelConfigCheck, ModelConfigsService, ChangeGate, ChangesRepository, ChangesService, EventsRepository, ChangeEvents, WebhookDispatcher, contributedOperations(...CONTRIBUTED_SETS)],
  exports: [FleetRollouts, PresetSource, AgentsService, AgentsRepository, ServiceInfoService, ShutdownGate, Reconciler, FleetReconciler, FleetView, AgentAccess, OperationDoors],
})
export class AgentsModule {}
