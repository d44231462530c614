import { Global, Module } from '@nestjs/common';
import { AppConfig, Clock } from '@app/common';
import { Metrics } from '@app/telemetry';
import { Store } from './store.js';

@Global()
@Module({
  providers: [
    { provide: Store, inject: [AppConfig, Metrics, Clock], useFactory: (config: AppConfig, metrics: Metrics, clock: Clock) => Store.open(config.DATABASE_URL, metrics, clock) },
  ],
  exports: [Store],
})
export class StoreModule {}
