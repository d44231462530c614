import { ApiOperation, ApiParam, ApiResponse } from '@app/common';
import type { ToolsetDeclaration } from '@app/mcp';
import { defineOperation, errorExample, type OperationSet } from '@app/doors';
import { error, invalid } from '../api/agents.openapi.js';
import { ChangeDecisionDto, ChangeDto, ChangeListDto, ChangeRefDto, ListChangesQueryDto } from './changes.dto.js';
import { ChangesService } from './changes.service.js';

const idParam = ApiParam({ name: 'id', description: 'The change id, from the write that proposed it (Location) or list_changes', schema: { type: 'string', example: 'ch-3b1f0c9a12ab' } });

export const CHANGES_TOOLSET: ToolsetDeclaration = {
  name: 'changes',
  title: 'Changes awaiting approval',
  description: 'Writes the policy makes proposals (four eyes): read them with their diff, approve, reject or withdraw them. Opt-in: ?toolsets=changes on /mcp.',
  instructions:
    'A write that answers status: pending_approval was not applied: show the user its change.diff and who may approve it. ' +
    'An approver reads the change with get_change (the diff, values before → after) before approve_change; the last approval needed applies it as the proposer\'s write.',
  default: false,
  always: false,
};

const notFound = error(404, 'not_found: no change with this id that the caller may read', errorExample('not_found', 'no change ch-3b1f0c9a12ab that you may read: list them with list_changes'));
const conflict = error(409, 'conflict: the change is not pending (decided, applied or expired), or this approver approved it already', errorExample('conflict', 'change ch-3b1f0c9a12ab is expired: it expired at 2026-03-15T09:26:53.000Z unapproved: propose the change again'));
const forbidden = error(403, "forbidden: the caller does not hold the rule's approver role in the change's namespace, or proposed the change itself", errorExample('forbidden', 'token:llm-bot proposed change ch-3b1f0c9a12ab and cannot decide it: another holder of role approver does'));

/** approve, reject, withdraw: a decision on a pending change, declared alike. */
function decision(name: 'approve_change' | 'reject_change' | 'withdraw_change', summary: string, description: string) {
  const method = name.split('_')[0] as 'approve' | 'reject' | 'withdraw';
  return defineOperation({
    name,
    rest: {
      tag: 'changes',
      method: 'post',
      path: `changes/:id/${method}`,
      status: 200,
      args: 'body',
      openapi: [
        ApiOperation({ operationId: `${method}Change`, summary, description: `${description} The same as the MCP tool ${name}.` }),
        idParam,
        ApiResponse({ status: 200, description: 'The change as it is now', type: ChangeDto }),
        invalid,
        forbidden,
        notFound,
        conflict,
      ],
    },
    tool: {
      title: summary,
      toolset: 'changes',
      description,
      annotations: { readOnlyHint: false, destructiveHint: method === 'approve', idempotentHint: false, openWorldHint: method === 'approve' },
      output: ChangeDto,
      // the last approval runs the proposer's write: a client may follow it as a task
      ...(method === 'approve' && { task: true }),
    },
    input: { path: ChangeRefDto, args: ChangeDecisionDto },
    service: ChangesService,
    call: (changes, ref, decision, access) => changes[method](access, ref, decision),
  });
}

/**
 * Proposals of writes an approval rule selects (docs/approvals.md), each operation declared once for
 * both doors. The policy decides on the change's namespace inside the service (a change is read
 * before it is known where it is): who may not read that namespace is told nothing of it.
 */
export const CHANGE_OPERATIONS: OperationSet = {
  toolsets: [CHANGES_TOOLSET],
  operations: [
    defineOperation({
      name: 'list_changes',
      rest: {
        tag: 'changes',
        method: 'get',
        path: 'changes',
        args: 'query',
        openapi: [
          ApiOperation({ operationId: 'listChanges', summary: 'Proposed changes, newest first', description: 'The changes in namespaces the caller may read, filtered by state, namespace, proposer and operation (at most 100). The same as the MCP tool list_changes.' }),
          ApiResponse({ status: 200, description: 'Changes, newest first', type: ChangeListDto }),
          invalid,
        ],
      },
      tool: {
        title: 'List proposed changes',
        toolset: 'changes',
        description: 'Lists proposals newest first (state: pending, applied, conflicted, …; namespace, proposer, operation narrow), each with its diff and approvals. Writes nothing.',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        output: ChangeListDto,
      },
      input: { args: ListChangesQueryDto },
      service: ChangesService,
      call: (changes, query, _command, access) => changes.list(access, query),
    }),
    defineOperation({
      name: 'get_change',
      rest: {
        tag: 'changes',
        method: 'get',
        path: 'changes/:id',
        openapi: [
          idParam,
          ApiOperation({ operationId: 'getChange', summary: 'A proposed change: the request, the diff, approvals, and what became of it', description: 'The same as the MCP tool get_change.' }),
          ApiResponse({ status: 200, description: 'The change', type: ChangeDto }),
          invalid,
          notFound,
        ],
      },
      tool: {
        title: 'Get a proposed change',
        toolset: 'changes',
        description: 'Reads one proposal: the write asked, who proposed it, the agent version it was planned on, values before → after, the manifest diff, warnings, who may approve, the approvals so far and its state. Writes nothing.',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        output: ChangeDto,
      },
      input: { path: ChangeRefDto },
      service: ChangesService,
      call: (changes, ref, _command, access) => changes.get(access, ref),
    }),
    decision(
      'approve_change',
      'Approve a proposed change',
      "Approves a pending change, as a holder of the approval rule's approver role in its namespace (never the proposer). The last approval needed applies it as the proposer's write, with If-Match on the version it was planned on: an agent that moved since ends the change conflicted (propose again).",
    ),
    decision('reject_change', 'Reject a proposed change', 'Ends a pending change unapplied, as a holder of its approver role (never the proposer); the comment says why.'),
    decision('withdraw_change', 'Withdraw your proposed change', 'Ends a pending change unapplied, by the proposer.'),
  ],
};
