import { ApiOperation, ApiParam, ApiResponse } from '@app/common';
import { defineOperation, errorExample, type OperationSet } from '@app/doors';
import { error, EXAMPLES } from '../api/agents.openapi.js';
import { NAMESPACE_SCHEMA } from '../api/requests.dto.js';
import { ModelConfigListDto, ModelConfigsPathDto } from './model-configs.dto.js';
import { ModelConfigsService } from './model-configs.service.js';

const NAMESPACE_MESSAGE = 'namespace must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit, at most 63 characters';

/**
 * The kagent ModelConfigs an agent's modelConfig can name, declared once for both doors. Its tool
 * joins the agents toolset (which the agents module declares): an LLM about to write an agent
 * lists them first.
 */
export const MODEL_CONFIG_OPERATIONS: OperationSet = {
  toolsets: [],
  operations: [
    defineOperation({
      name: 'list_model_configs',
      rest: {
        tag: 'model-configs',
        method: 'get',
        path: 'namespaces/:namespace/model-configs',
        openapi: [
          ApiOperation({
            operationId: 'listModelConfigs',
            summary: "The kagent ModelConfigs of a namespace: name, provider, model, readiness (never their Secrets)",
            description:
              "Read from the cluster as the caller (KUBE_IMPERSONATE): what an agent's modelConfig can name in that namespace. The API key, and which Secret holds it, are never shown. The same as the MCP tool list_model_configs.",
          }),
          ApiParam({ name: 'namespace', description: 'The Kubernetes namespace', schema: { ...NAMESPACE_SCHEMA } }),
          ApiResponse({ status: 200, description: 'Every ModelConfig of the namespace, by name', type: ModelConfigListDto }),
          error(400, 'invalid_request: the namespace is not a DNS-1123 label', errorExample('invalid_request', NAMESPACE_MESSAGE, [{ path: 'namespace', message: NAMESPACE_MESSAGE }])),
          error(
            403,
            'forbidden: the policy does not grant list_model_configs in the namespace, or the cluster does not let the caller list ModelConfigs there',
            errorExample(
              'forbidden',
              'the Kubernetes cluster refused listing ModelConfigs (modelconfigs.kagent.dev/v1alpha2) in namespace agents for alice@example.com: modelconfigs.kagent.dev is forbidden; ask a cluster admin for a Role granting list on modelconfigs.kagent.dev in that namespace',
            ),
          ),
          error(
            404,
            'not_found: the cluster serves no kagent ModelConfig API',
            errorExample('not_found', 'the cluster serves no kagent ModelConfig API (modelconfigs.kagent.dev/v1alpha2): install kagent and its CRDs, or ask a cluster admin which kagent version runs there'),
          ),
          error(502, 'backend_error: the cluster could not be read', EXAMPLES.backend),
        ],
      },
      tool: {
        title: 'List model configs',
        toolset: 'agents',
        description:
          "Lists the kagent ModelConfigs of a namespace from the cluster, as the caller: name, provider, model and readiness (ready, notReady, unknown, from kagent's conditions). " +
          "An agent's modelConfig must name one of these in the agent's namespace; create_agent and update_agent refuse a name that is not there. Never shows an API key or its Secret. Writes nothing.",
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        output: ModelConfigListDto,
      },
      input: { path: ModelConfigsPathDto },
      service: ModelConfigsService,
      target: 'namespace',
      call: (modelConfigs, { namespace }) => modelConfigs.list(namespace),
    }),
  ],
};
