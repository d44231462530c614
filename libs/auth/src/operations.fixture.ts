/**
 * The operations the service serves today (every MCP tool plus the REST-only ones), for the
 * policy's specs; the service passes its own registry's names.
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
  'list_server_toolsets',
  'list_operations',
  'reconcile_agents',
  'adopt_agent',
  'list_blueprints',
  'get_blueprint',
  'list_blueprint_versions',
  'create_blueprint',
  'save_blueprint_version',
  'rollback_blueprint',
  'rename_blueprint',
  'delete_blueprint',
  'validate_blueprint',
  'list_blueprint_referees',
  'upgrade_blueprint_agents',
] as const;
