import { Module } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { HelmClient } from './helm.client.js';
import { resolveHelmBinary } from './helm-binary.js';

@Module({
  providers: [
    {
      provide: HelmClient,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new HelmClient({
          bin: config.HELM_BIN ?? resolveHelmBinary(),
          kubeconfig: config.KUBECONFIG,
          timeoutSeconds: config.HELM_TIMEOUT_SECONDS,
        }),
    },
  ],
  exports: [HelmClient],
})
export class HelmModule {}
