import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { McpRegistry } from '@app/mcp';
import { AGENT_OPERATIONS } from './agents.operations.js';
import { ErrorResponseDto } from '@app/doors';
import { OperationDoors } from '@app/doors';

/** The agent operations' MCP tools and toolsets, contributed to the MCP registry when the module starts. */
@Injectable()
export class AgentsTools implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly doors: OperationDoors,
    private readonly registry: McpRegistry,
  ) {}

  onModuleInit(): void {
    this.registry.useErrorModel(ErrorResponseDto);
    this.doors.contribute(AGENT_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(AGENT_OPERATIONS);
  }
}

