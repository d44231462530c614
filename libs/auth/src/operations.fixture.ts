/**
 * Operation names for the policy's unit specs: the policy compiler takes the service's names as
 * an input, so these specs need some. They are a sample, not the list the service serves: that
 * list is composed in apps/agent-manager/src/app.module.ts from each module's own, and
 * test/auth/registration-invariant.e2e-spec.ts proves every one of them can be named in a policy.
 */
export const OPERATIONS = [
  'get_info',
  'list_agents',
  'get_agent',
  'get_agent_status',
  'list_agent_revisions',
  'validate_agent',
  'create_agent',
  'update_agent',
  'delete_agent',
  'rollback_agent',
  'list_operations',
  'approve_change',
  'reject_change',
  'get_change',
] as const;
