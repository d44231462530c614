import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy, type Type } from '@nestjs/common';
import type { OperationSet } from './operation.js';
import { OperationDoors } from './operation-doors.js';

/**
 * A provider that contributes a module's operation sets to both doors, in the order given, once
 * every module has started (so their toolsets list after the ones contributed at init: agents,
 * blueprints), and withdraws them when the module ends. A module lists its sets once:
 * `controllers: sets.flatMap(restControllers)`, `providers: [contributedOperations(...sets)]`.
 */
export function contributedOperations(...sets: OperationSet[]): Type<OnApplicationBootstrap & OnModuleDestroy> {
  @Injectable()
  class ContributedOperations implements OnApplicationBootstrap, OnModuleDestroy {
    constructor(@Inject(OperationDoors) private readonly doors: OperationDoors) {}

    onApplicationBootstrap(): void {
      for (const set of sets) this.doors.contribute(set);
    }

    onModuleDestroy(): void {
      for (const set of sets) this.doors.withdraw(set);
    }
  }
  return ContributedOperations;
}
