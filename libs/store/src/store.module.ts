import { Global, Module } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { Store } from './store.js';

@Global()
@Module({
  providers: [{ provide: Store, inject: [AppConfig], useFactory: (config: AppConfig) => Store.open(config.DATABASE_URL) }],
  exports: [Store],
})
export class StoreModule {}
