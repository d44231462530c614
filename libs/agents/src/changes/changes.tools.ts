import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { CHANGE_OPERATIONS } from './changes.operations.js';

/** The change tools, in the opt-in `changes` toolset. */
@Injectable()
export class ChangesTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onApplicationBootstrap(): void {
    this.doors.contribute(CHANGE_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(CHANGE_OPERATIONS);
  }
}
