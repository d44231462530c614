import { randomUUID } from 'node:crypto';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CallToolResult, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import type { McpSessionRepository } from './mcp-session.repository.js';

/** How long a task (and its result) is kept after it was created. */
export const TASK_TTL_MS = 3_600_000;
/** How often a client is told to poll tasks/get. */
export const TASK_POLL_MS = 1000;
/**
 * How long after its journal entry finished a task without a stored result is still `working`: the
 * replica running the write stores the tool's answer right after recording it. Past this, the
 * journal's outcome is the task's (that replica stopped before it stored the answer).
 */
const RESULT_GRACE_MS = 10_000;
/** How many tasks tasks/list answers (newest first; no further pages). */
const LIST_LIMIT = 100;

/** A task as the store keeps it (JSON in the session's McpAnswer row `task:<id>`). */
interface TaskRecord {
  taskId: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** The journal entry the tool call's write started (the task's id then); null when it journaled none (refused, unchanged, proposed). */
  operationId: string | null;
  status: Task['status'];
  statusMessage?: string;
  result?: CallToolResult;
}

/**
 * The MCP tasks of one Streamable HTTP session (the 2025-11-25 specification's tasks, experimental in the
 * SDK), kept in the store, so any replica answers tasks/get, tasks/result and tasks/list: a write
 * tool called with `task` answers a task at once whose id is the journal entry its write started,
 * and whose status is that entry's outcome until the replica running it stores the tool's answer.
 * The SDK's protocol layer serves the tasks/* requests from it; the sessionId it passes is the
 * stateless transport's (none): this store is bound to its session when made.
 */
export class McpTaskStore implements TaskStore {
  constructor(
    private readonly session: string,
    private readonly repository: McpSessionRepository,
  ) {}

  /** A tool call's task, `working`: its id the journal entry's when its write started one. */
  async begin(operationId: string | undefined): Promise<Task> {
    const taskId = operationId ?? randomUUID();
    const now = (await this.repository.now()).toISOString();
    const record: TaskRecord = { taskId, createdAt: now, lastUpdatedAt: now, operationId: operationId ?? null, status: 'working' };
    await this.repository.saveTask(this.session, taskId, JSON.stringify(record));
    return this.view(record);
  }

  /** The tool call ended: its answer is the task's result; an isError answer is a failed task. */
  async finish(taskId: string, result: CallToolResult): Promise<void> {
    await this.storeTaskResult(taskId, result.isError ? 'failed' : 'completed', result);
  }

  createTask(): Promise<Task> {
    return this.begin(undefined);
  }

  async getTask(taskId: string): Promise<Task | null> {
    const record = await this.read(taskId);
    return record && this.view(await this.current(record));
  }

  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result): Promise<void> {
    const record = await this.read(taskId);
    if (!record) throw new Error(`Task not found: ${taskId}`);
    const finished: TaskRecord = { ...record, status, lastUpdatedAt: (await this.repository.now()).toISOString(), result: result as CallToolResult };
    await this.repository.updateTask(this.session, taskId, JSON.stringify(finished));
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const record = await this.read(taskId);
    if (!record) throw new Error(`Task not found: ${taskId}`);
    if (record.result) return record.result;
    const current = await this.current(record);
    const text = `${current.statusMessage ?? `task ${taskId} is ${current.status}`}; its tool answer was not kept: read the agent with get_agent, the journal entry with get_operation`;
    return { isError: true, content: [{ type: 'text', text }] };
  }

  /** A write cannot be stopped once it started (helm may be applying it): cancelling is refused; no other status is set from outside. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    throw new Error(`task ${taskId} cannot be set ${status}: a write is not cancelled once started (helm may be applying it); follow it with tasks/get`);
  }

  async listTasks(): Promise<{ tasks: Task[] }> {
    const records = (await this.repository.listTasks(this.session, LIST_LIMIT)).map((text) => JSON.parse(text) as TaskRecord);
    return { tasks: await Promise.all(records.map(async (record) => this.view(await this.current(record)))) };
  }

  private async read(taskId: string): Promise<TaskRecord | null> {
    const text = await this.repository.findTask(this.session, taskId);
    return text === null ? null : (JSON.parse(text) as TaskRecord);
  }

  /**
   * A task without a stored result reads its journal entry: still `working` while the entry is
   * pending (or finished less than RESULT_GRACE_MS ago), else the entry's outcome — the write's
   * replica stopped before it stored the answer, and the recovery sweep closed the entry.
   */
  private async current(record: TaskRecord): Promise<TaskRecord> {
    if (record.result || !record.operationId) return record;
    const entry = await this.repository.journalEntry(record.operationId);
    if (!entry || entry.state === 'pending' || !entry.finishedAt) return record;
    if ((await this.repository.now()).getTime() - entry.finishedAt.getTime() < RESULT_GRACE_MS) return record;
    const status = entry.state === 'succeeded' ? 'completed' : 'failed';
    const statusMessage = `its write ended ${entry.state}${entry.errorMessage ? `: ${entry.errorMessage}` : ''} (journal entry ${record.operationId}), after the replica running it stopped`;
    return { ...record, status, statusMessage, lastUpdatedAt: entry.finishedAt.toISOString() };
  }

  private view(record: TaskRecord): Task {
    return {
      taskId: record.taskId,
      status: record.status,
      ttl: TASK_TTL_MS,
      createdAt: record.createdAt,
      lastUpdatedAt: record.lastUpdatedAt,
      pollInterval: TASK_POLL_MS,
      ...(record.statusMessage && { statusMessage: record.statusMessage }),
    };
  }
}
