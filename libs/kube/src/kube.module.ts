import { Module } from '@nestjs/common';
import { AppConfig, OperationContexts } from '@app/common';
import { ClusterState } from './cluster-state.js';
import { KubeClient } from './kube.client.js';

@Module({
  providers: [
    {
      provide: ClusterState,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new ClusterState({ ...process.env, KUBECONFIG: config.KUBECONFIG }, config.PORT),
    },
    {
      provide: KubeClient,
      inject: [ClusterState, AppConfig],
      useFactory: (cluster: ClusterState, config: AppConfig) =>
        new KubeClient(cluster, config.KUBECONFIG, config.KUBE_IMPERSONATE ? () => OperationContexts.kubeIdentity() : undefined),
    },
  ],
  exports: [KubeClient, ClusterState],
})
export class KubeModule {}
