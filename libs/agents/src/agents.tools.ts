import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { OperationContexts } from '@app/common';
import { McpRegistry, type ToolSpec } from '@app/mcp';
import { recordableActor } from './actor.js';
import { AGENT_OPERATIONS } from './agents.operations.js';
import { AgentAccess } from './audit/agent-access.js';
import { answerForCaller, forCaller } from './audit/backend-errors.js';
import { ErrorResponseDto } from './error-response.dto.js';
import { OperationDoors } from './operations/operation-doors.js';

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

/** Runs a tool with the MCP client's name made recordable and helm's words for admins only (the blueprints' tools until they are descriptors too). */
export function recorded(spec: ToolSpec, access: AgentAccess): ToolSpec {
  return {
    ...spec,
    run: (args, context) => {
      const current = OperationContexts.current();
      const client = current.client === undefined ? undefined : recordableActor(current.client);
      return OperationContexts.run({ ...current, actor: recordableActor(current.actor), client }, async () => {
        try {
          return answerForCaller(await spec.run(args, context), access.isAdmin());
        } catch (error) {
          throw forCaller(error, access.isAdmin());
        }
      });
    },
  };
}
