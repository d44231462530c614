import { Module } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { KubeClient } from './kube.client.js';

@Module({
  providers: [{ provide: KubeClient, inject: [AppConfig], useFactory: (config: AppConfig) => new KubeClient(config.KUBECONFIG) }],
  exports: [KubeClient],
})
export class KubeModule {}
