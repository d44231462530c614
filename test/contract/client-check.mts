// Compiled (never run) with tsc --strict beside the client types openapi-typescript generates from
// openapi/agent-manager.json: what a portal backend's generated client lets through, or not.
import type { components, paths } from './agent-manager.js';

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type CreateAnswers = paths['/api/v1/agents']['post']['responses'];

/** A created agent (201) is never null: no `!`, no `?.`. */
export function createdName(answer: Json<CreateAnswers[201]>): string {
  return `${answer.agent.namespace}/${answer.agent.name} v${answer.agent.version}`;
}

/** A dry run (200) creates no agent; its dryRun is literally true. */
export function dryRunAgent(answer: Json<CreateAnswers[200]>): { agent: null; dryRun: true; manifests: string } {
  return { agent: answer.agent, dryRun: answer.dryRun, manifests: answer.manifests };
}

/** The request body is the README's dry run, and requestId is optional. */
export const body: paths['/api/v1/agents']['post']['requestBody']['content']['application/json'] = {
  name: 'incident-helper',
  namespace: 'agents',
  modelConfig: 'default-model-config',
  toolset: ['preset:read-only', 'workflow:incident-triage'],
  dryRun: true,
};

type ListQuery = NonNullable<paths['/api/v1/agents']['get']['parameters']['query']>;
export const deleted: ListQuery = { status: 'deleted', limit: 50 };
// @ts-expect-error status is one of active, deleted, all
export const archived: ListQuery = { status: 'archived' };
// @ts-expect-error limit is a number, not text
export const textLimit: ListQuery = { limit: '20' };

type ErrorCode = components['schemas']['ErrorObjectDto']['code'];
export const conflict: ErrorCode = 'conflict';
// @ts-expect-error only the codes of docs/contract.md §6 exist
export const teapot: ErrorCode = 'teapot';

type Verdict = components['schemas']['StatusDto']['verdict'];
// @ts-expect-error the verdict is ready, progressing, failed or unknown
export const maybe: Verdict = 'maybe';
