import { ApiOperation, ApiResponse } from '@app/common';
import { defineOperation, type OperationSet } from '@app/doors';
import { error, EXAMPLES, queryOf } from '../api/agents.openapi.js';
import { ChangeEventPageDto, ListEventsQueryDto } from './events.dto.js';
import { ChangeEvents } from './events.service.js';

/**
 * Change events (docs/contract.md §14), declared once: the outbox for consumers catching up after
 * downtime and for audits. Events span namespaces, so the policy decides on "*": admins, unless a
 * role is granted list_events on "*".
 */
export const EVENT_OPERATIONS: OperationSet = {
  toolsets: [],
  operations: [
    defineOperation({
      name: 'list_events',
      rest: {
        tag: 'events',
        method: 'get',
        path: 'events',
        args: 'query',
        openapi: [
          ApiOperation({
            operationId: 'listEvents',
            summary: 'Change events, oldest first: every committed write as a CloudEvents 1.0 event',
            description:
              'The events webhooks receive (agents created, updated, deleted, rolled back, adopted, reconciled; blueprints; changes; fleet rollouts), in commit order, in CloudEvents structured form. ' +
              'Filter by type (`*` for any text) and subject; pass nextCursor to read on, and keep the last one to poll for newer events. Admin-only unless the policy grants list_events on "*". The same as the MCP tool list_events.',
          }),
          queryOf(ListEventsQueryDto),
          ApiResponse({ status: 200, description: 'One page of events', type: ChangeEventPageDto }),
          error(400, 'invalid_request: a filter, the cursor or the page size is wrong; details name it', EXAMPLES.invalidQuery),
        ],
      },
      tool: {
        title: 'Change events',
        toolset: 'audit',
        description:
          'Reads the change events oldest first: every committed write (agents created, updated, deleted, rolled back, adopted, reconciled; blueprints; changes; fleet rollouts) as a CloudEvents 1.0 event with who, the operation, the revision and the spec fields that changed. ' +
          'Filter by type (`*` for any text, e.g. io.agent-manager.agent.*) and subject (namespace/name); pass nextCursor as cursor to read on. Writes nothing.',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        output: ChangeEventPageDto,
      },
      input: { args: ListEventsQueryDto },
      service: ChangeEvents,
      target: { namespace: '*' },
      call: (events, query) => events.list(query),
    }),
  ],
};
