import { Injectable, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { HelmClient } from './helm.client.js';
import { resolveHelmBinary } from './helm-binary.js';

/** At start: detect helm's version once (writes pick their flags by it) and clear stale values files. */
@Injectable()
class HelmStartup implements OnApplicationBootstrap {
  private readonly logger = new Logger(HelmClient.name);

  constructor(private readonly helm: HelmClient) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      const { version } = await this.helm.version();
      this.logger.log(`helm ${version} at ${this.helm.bin}`);
    } catch (error) {
      this.logger.warn(`helm is not usable yet: ${(error as Error).message}`);
    }
    const removed = await this.helm.removeStaleValues();
    if (removed > 0) this.logger.warn(`removed ${removed} values folder(s) left by an interrupted helm run`);
  }
}

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
    HelmStartup,
  ],
  exports: [HelmClient],
})
export class HelmModule {}
