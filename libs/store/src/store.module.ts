import { Global, Module } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { Metrics } from '@app/telemetry';
import { Store } from './store.js';

@Global()
@Module({
  providers: [{ provide: Store, inject: [AppConfig, Metrics], useFactory: (config: AppConfig, metrics: Metrics) => Store.open(config.DATABASE_URL, metrics) }],
  exports: [Store],
})
export class StoreModule {}
