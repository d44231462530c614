import { Global, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { Metrics } from './metrics.js';

/** prom-client loads once the service is up, not on the way to it. */
@Injectable()
class MetricsStartup implements OnApplicationBootstrap {
  constructor(private readonly metrics: Metrics) {}

  onApplicationBootstrap(): void {
    setImmediate(() => void this.metrics.load());
  }
}

/** The service's metrics, one registry per app. */
@Global()
@Module({
  providers: [{ provide: Metrics, useFactory: () => new Metrics() }, MetricsStartup],
  exports: [Metrics],
})
export class TelemetryModule {}
