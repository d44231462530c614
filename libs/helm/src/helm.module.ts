import { Injectable, Logger, Module, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, OperationContexts } from '@app/common';
import { ClusterState, KubeModule } from '@app/kube';
import { Metrics } from '@app/telemetry';
import { HelmClient, type HelmClientOptions } from './helm.client.js';
import { resolveHelmBinary } from './helm-binary.js';
import { observeHelm } from './helm-telemetry.js';
import { ChartSources } from './chart-source.js';

/**
 * After start, in the background (nothing waits for helm to answer before the service is up):
 * detect helm's version once (writes pick their flags by it) and clear stale values files.
 */
@Injectable()
class HelmStartup implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(HelmClient.name);
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly helm: HelmClient) {}

  onApplicationBootstrap(): void {
    setImmediate(() => {
      if (!this.closed) this.running = this.start();
    });
  }

  /** A close waits for the start-up work, so no helm process outlives the app. */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.running;
    await this.helm.close();
  }

  private async start(): Promise<void> {
    try {
      const { version } = await this.helm.version();
      this.logger.log(`helm ${version} at ${this.helm.bin}`);
    } catch (error) {
      this.logger.warn(`helm is not usable yet: ${(error as Error).message}`);
    }
    const removed = await this.helm.removeStaleValues().catch(() => 0);
    if (removed > 0) this.logger.warn(`removed ${removed} values folder(s) left by an interrupted helm run`);
  }
}

/**
 * The helm client's options; `clusterProblem` refuses cluster calls without spawning when there is no
 * usable cluster; with KUBE_IMPERSONATE each run acts as the caller of the operation context.
 */
function helmOptions(config: AppConfig, cluster: ClusterState, metrics: Metrics): HelmClientOptions {
  return {
    bin: config.HELM_BIN ?? resolveHelmBinary(),
    kubeconfig: config.KUBECONFIG,
    timeoutSeconds: config.HELM_TIMEOUT_SECONDS,
    concurrency: config.HELM_CONCURRENCY,
    queueSeconds: config.HELM_QUEUE_SECONDS,
    clusterProblem: () => cluster.problem(),
    identity: config.KUBE_IMPERSONATE ? () => OperationContexts.kubeIdentity() : undefined,
    observe: observeHelm(metrics),
  };
}

@Module({
  imports: [KubeModule],
  providers: [
    {
      provide: HelmClient,
      inject: [AppConfig, ClusterState, Metrics],
      useFactory: (config: AppConfig, cluster: ClusterState, metrics: Metrics) => {
        const helm = new HelmClient(helmOptions(config, cluster, metrics));
        metrics.watchHelmPool(() => helm.poolStats);
        return helm;
      },
    },
    HelmStartup,
    ChartSources,
  ],
  exports: [HelmClient, ChartSources],
})
export class HelmModule {}
