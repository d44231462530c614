import { parse } from 'yaml';
import { ApiBody, ApiConsumes, ApiOperation, ApiQuery, ApiResponse } from '@app/common';
import { defineOperation, errorExample, ErrorResponseDto, type OperationSet } from '@app/doors';
import { ExportQueryDto, ExportResultDto, ImportRequestDto, ImportResultDto } from './transfer.dto.js';
import { TransferService } from './transfer.service.js';

const error = (status: number, description: string, example: ReturnType<typeof errorExample>) => ApiResponse({ status, description, type: ErrorResponseDto, example });
const forbidden = (operation: string, where: string) =>
  error(403, `forbidden: ${operation} is not granted to the caller ${where}`, errorExample('forbidden', `${operation} in namespace "*" is not granted to token:ci`));
const invalidDocument = error(
  400,
  'invalid_request: the document (or a query parameter) is wrong; details name each field path',
  errorExample('invalid_request', 'agents[2].spec.toolset[0]: selector "preset" must be kind:name', [{ path: 'agents[2].spec.toolset[0]', message: 'selector "preset" must be kind:name' }]),
);

/** A list query parameter as sent once or repeated (`?namespace=a&namespace=b`). */
function list(value: unknown): unknown {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value : [value];
}

/** "true"/"false" in a query become booleans; anything else is left for the DTO to refuse by name. */
function flag(value: unknown): unknown {
  return value === 'true' ? true : value === 'false' ? false : value;
}

/** The export's query: lists repeated, history a flag, the format by ?format= or else by Accept. */
function exportArgs(query: Record<string, unknown>, request: { headers: Record<string, string | string[] | undefined> }): Record<string, unknown> {
  const accept = [request.headers.accept ?? ''].flat().join(', ');
  const format = query.format ?? (/application\/json/.test(accept) && !/yaml/.test(accept) ? 'json' : undefined);
  return {
    ...query,
    ...(query.namespace !== undefined && { namespace: list(query.namespace) }),
    ...(query.label !== undefined && { label: list(query.label) }),
    ...(query.blueprintHistory !== undefined && { blueprintHistory: flag(query.blueprintHistory) }),
    ...(format !== undefined && { format }),
  };
}

/** The import's input: the body is the document (YAML text, or its JSON form), dryRun and prune come in the query. */
function importArgs(query: Record<string, unknown>, request: { body: unknown }): Record<string, unknown> {
  return { ...query, ...(query.dryRun !== undefined && { dryRun: flag(query.dryRun) }), ...(query.prune !== undefined && { prune: flag(query.prune) }), document: request.body };
}

/**
 * import_agents: its route's body, the fleet document (YAML too), is larger than any other, so the
 * app parses it apart (app.factory.ts, http-hardening.ts read its path from here).
 */
export const IMPORT_AGENTS = defineOperation({
  name: 'import_agents',
  rest: {
    tag: 'transfer',
    method: 'post',
    path: 'import',
    status: 200,
    args: importArgs,
    openapi: [
      ApiOperation({
        operationId: 'importAgents',
        summary: 'Plan a fleet document against the store, and apply it item by item',
        description:
          'The body is the document export wrote (Content-Type: application/yaml) or its JSON form (application/json); dryRun=true answers the plan only; prune=true (or prune: true in the document) deletes the agents of its selection it no longer lists. ' +
          'Per agent and blueprint: create, update (with the fields that move), unchanged, conflict (changed in the store since the version the document records: not applied) or prune. ' +
          'Each write runs as the caller through the write pipeline (journal, lease, an idempotency key derived from the document and item), authorized per item (refused items are reported, the rest go on); failures are reported per item. Re-running an import applied before changes nothing. The same as the MCP tool import_agents.',
      }),
      ApiQuery({ name: 'dryRun', required: false, type: Boolean, description: 'Answer the plan only' }),
      ApiQuery({ name: 'prune', required: false, type: Boolean, description: "Delete the agents of the document's selection it does not list" }),
      ApiConsumes('application/yaml', 'application/json'),
      ApiBody({
        description: 'The fleet document (docs/contract.md §12): its YAML text, or its JSON form',
        schema: { oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }], example: 'apiVersion: agent-manager.io/v1\nkind: AgentFleet\nselection: {namespaces: [agents]}\nblueprints: []\nagents: []\n' },
      }),
      ApiResponse({ status: 200, description: 'The plan, and what became of each item', type: ImportResultDto }),
      invalidDocument,
      forbidden('import_agents', 'in any namespace (each item is then authorized as the write it is)'),
    ],
  },
  tool: {
    title: 'Import agents from a document',
    toolset: 'admin',
    description:
      'Takes a fleet document (the YAML export_agents writes) and plans it against the store: per agent and blueprint create, update (with the fields that move), unchanged, conflict (changed since the version the document records: not applied) or prune (with prune: true, agents of its selection it no longer lists). ' +
      'Call it with dryRun: true first and show the plan. Applied, each item is written as you (refused items reported, the rest go on); re-running the same document changes nothing.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    output: ImportResultDto,
  },
  input: { args: ImportRequestDto },
  service: TransferService,
  call: (transfer, input, _command, access) => transfer.import(access, input),
  confirm: (input) =>
    input.dryRun ? undefined : `import_agents writes the agents and blueprints of the document as you (creates, updates${input.prune ? ', and deletes the agents of its selection it no longer lists' : ''}).`,
});

/**
 * Agents as code (docs/contract.md §12), declared once for both doors: export, granted on "*" (an
 * admin's; it reads every namespace's agents), and import, granted somewhere, whose items are then
 * authorized one by one as the writes they are.
 */
export const TRANSFER_OPERATIONS: OperationSet = {
  toolsets: [],
  operations: [
    defineOperation({
      name: 'export_agents',
      rest: {
        tag: 'transfer',
        method: 'get',
        path: 'export',
        args: exportArgs,
        openapi: [
          ApiOperation({
            operationId: 'exportAgents',
            summary: 'The fleet as one document: agents (spec, labels, blueprint origin, chart, version) and blueprints, never secrets or journal data',
            description:
              'A deterministic YAML document (apiVersion agent-manager.io/v1, kind AgentFleet): keys in one order, agents by namespace and name, no times, so exporting an unchanged store twice gives the same bytes. ' +
              'Filters: namespace and label (repeat them), blueprint. Accept: application/json (or ?format=json) answers its JSON form. The same as the MCP tool export_agents, which answers the YAML as text.',
          }),
          ApiQuery({ name: 'namespace', required: false, type: [String], description: 'Only agents in these namespaces (repeat the parameter)' }),
          ApiQuery({ name: 'label', required: false, type: [String], description: 'Only agents carrying every one of these labels, key=value (repeat the parameter)' }),
          ApiQuery({ name: 'blueprint', required: false, type: String, description: 'Only agents made from this blueprint, and only this blueprint' }),
          ApiQuery({ name: 'blueprintHistory', required: false, type: Boolean, description: "Each blueprint's stored versions too" }),
          ApiQuery({ name: 'format', required: false, enum: ['yaml', 'json'], description: 'yaml (default) or json; Accept: application/json chooses json too' }),
          ApiResponse({
            status: 200,
            description: 'The document: YAML by default, its JSON form when asked',
            content: {
              'application/yaml': { schema: { type: 'string' }, example: 'apiVersion: agent-manager.io/v1\nkind: AgentFleet\nselection: {}\nblueprints: []\nagents: []\n' },
              'application/json': { schema: { type: 'object', additionalProperties: true } },
            },
          }),
          invalidDocument,
          forbidden('export_agents', 'on "*" (an admin\'s: it reads every namespace)'),
        ],
        reply: (answer, input) => {
          const { yaml } = answer as ExportResultDto;
          const format = (input.args as { format?: string }).format;
          return { text: format === 'json' ? { contentType: 'application/json; charset=utf-8', text: `${JSON.stringify(parse(yaml), null, 2)}\n` } : { contentType: 'application/yaml; charset=utf-8', text: yaml } };
        },
      },
      tool: {
        title: 'Export agents as a document',
        toolset: 'admin',
        description:
          'Writes the fleet as one YAML document (apiVersion agent-manager.io/v1, kind AgentFleet): agents (namespace, name, spec, blueprint origin, chart, version) and blueprints, filtered by namespace, label (key=value) and blueprint; never secrets or journal data. The same store gives the same bytes. import_agents takes it back.',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        output: ExportResultDto,
      },
      input: { args: ExportQueryDto },
      service: TransferService,
      target: { namespace: '*' },
      call: async (transfer, query) => {
        const { document, yaml } = await transfer.export(query);
        return { yaml, agents: document.agents.length, blueprints: document.blueprints.length } satisfies ExportResultDto;
      },
    }),
    IMPORT_AGENTS,
  ],
};
