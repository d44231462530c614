import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { EVENT_OPERATIONS } from './events.operations.js';

/** list_events, in the opt-in `audit` toolset (contributed after the agent operations, which declare it). */
@Injectable()
export class EventsTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onApplicationBootstrap(): void {
    this.doors.contribute(EVENT_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(EVENT_OPERATIONS);
  }
}
