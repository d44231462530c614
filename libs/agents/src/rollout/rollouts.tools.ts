import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { ROLLOUT_OPERATIONS } from './rollouts.operations.js';

/** The rollout tools, in the opt-in `fleet` toolset. */
@Injectable()
export class RolloutsTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onApplicationBootstrap(): void {
    this.doors.contribute(ROLLOUT_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(ROLLOUT_OPERATIONS);
  }
}
