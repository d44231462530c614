import { Module } from '@nestjs/common';
import { AppConfig, OperationContexts } from '@app/common';
import { Metrics } from '@app/telemetry';
import { ClusterState } from './cluster-state.js';
import { KubeClient } from './kube.client.js';
import { ModelConfigReader } from './model-configs.js';

@Module({
  providers: [
    {
      provide: ClusterState,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new ClusterState({ ...process.env, KUBECONFIG: config.KUBECONFIG }, config.PORT),
    },
    {
      provide: KubeClient,
      inject: [ClusterState, AppConfig, Metrics],
      useFactory: (cluster: ClusterState, config: AppConfig, metrics: Metrics) =>
        new KubeClient(cluster, config.KUBECONFIG, config.KUBE_IMPERSONATE ? () => OperationContexts.kubeIdentity() : undefined, metrics),
    },
    {
      provide: ModelConfigReader,
      inject: [ClusterState, AppConfig, Metrics],
      useFactory: (cluster: ClusterState, config: AppConfig, metrics: Metrics) =>
        new ModelConfigReader(cluster, config.KUBECONFIG, config.KUBE_IMPERSONATE ? () => OperationContexts.kubeIdentity() : undefined, metrics),
    },
  ],
  exports: [KubeClient, ClusterState, ModelConfigReader],
})
export class KubeModule {}
