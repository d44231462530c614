import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type Response } from 'express';
import { applyOpenApiDecorators } from '@app/common';

/** The OpenAPI document of the REST door, with keys sorted so the committed file is stable. */
export async function buildOpenApi(app: INestApplication, version: string): Promise<OpenAPIObject> {
  const { DocumentBuilder, SwaggerModule } = await applyOpenApiDecorators();
  const config = new DocumentBuilder()
    .setTitle('agent-manager')
    .setDescription('Create, update, validate, roll back, delete and read kagent agents (Generic agent chart releases) with a Muster toolset.')
    .setVersion(version)
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addServer('/', 'This agent-manager (paths are relative to where the document is served)')
    .addTag('agents', 'kagent agents as helm releases of the Generic agent chart: create, read, update, validate, roll back, delete')
    .addTag('audit', 'The journal of writes and refusals: who, how, which door, what, the outcome')
    .addTag('toolset-presets', "Muster's presets: the ones a toolset may name (built-in and the installation's), and a proposed toolsetPresets checked by Muster's start-up rules")
    .addTag('model-configs', "kagent ModelConfigs: what an agent's modelConfig can name in a namespace, read from the cluster as the caller")
    .addTag('changes', 'Four eyes: writes the policy marks as needing approval, proposed with their diff and applied once another person approves')
    .addTag('fleet', 'Fleet rollouts: a chart release moved to the agents a selector picks, in health-gated waves; pause, resume, cancel')
    .addTag('admin', 'Convergence: reconcile the store, helm releases and live Agents, and adopt releases the store lost')
    .addTag('transfer', 'Agents as code: the fleet as one YAML document (export), and a document planned against the store and applied item by item (import)')
    .addTag('blueprints', 'Blueprints: named, versioned bundles of create arguments, each served as its own MCP tool whose input holds only the open arguments (not Muster presets)')
    .addTag('events', 'Change events: every committed write as a CloudEvents 1.0 event, delivered to the webhooks of WEBHOOKS_FILE and readable here to catch up or audit')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          'An access token from the OIDC issuer (OIDC_ISSUER_URL, audience OIDC_AUDIENCE) or an API token an admin issued (API_TOKENS_FILE). Not needed when authentication is off.',
      },
      BEARER,
    )
    .build();
  return sortKeys(secured(SwaggerModule.createDocument(app, config, { operationIdFactory: (_c, method) => method }))) as OpenAPIObject;
}

const BEARER = 'bearer';
const UNAUTHENTICATED = {
  error: {
    code: 'unauthenticated',
    message: 'authentication is required: send "Authorization: Bearer <token>" with an access token from https://dex.example.com or an API token an admin issued you',
    details: [],
  },
};
const FORBIDDEN = {
  error: {
    code: 'forbidden',
    message:
      'create_agent in namespace "payments" is not granted to token:ci-docs (groups: docs): an admin grants it in AUTHZ_POLICY_FILE with a binding of a role that names this operation to this subject or one of its groups',
    details: [],
  },
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** Every operation (health is not in the document) needs the bearer token, and says what 401 and 403 mean. */
function secured(document: OpenAPIObject): OpenAPIObject {
  const error = { $ref: '#/components/schemas/ErrorResponseDto' };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      operation.security = [{ [BEARER]: [] }];
      operation.responses['401'] ??= {
        description: 'unauthenticated: no token, or one that is expired, for another audience or issuer, or unknown; WWW-Authenticate names the protected-resource metadata',
        content: { 'application/json': { schema: error, example: UNAUTHENTICATED } },
      };
      operation.responses['403'] ??= {
        description: 'forbidden: the policy does not grant this operation in this namespace to this principal (or a Host/Origin outside ALLOWED_HOSTS)',
        content: { 'application/json': { schema: error, example: FORBIDDEN } },
      };
    }
  }
  return document;
}

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * Swagger UI at /<uiPath> and the document at /<jsonPath>, as SwaggerModule.setup serves them, but
 * set up by the first request to either, so @nestjs/swagger and the document load then, not at
 * start. SwaggerModule.setup registers its routes on the app's HTTP adapter; here they go to a
 * router that a middleware, placed where setup used to put them (before Nest's routes and its
 * 404), hands those requests to. Routes added to the app itself after start would sit behind the 404.
 */
export function serveApiDocs(app: NestExpressApplication, uiPath: string, jsonPath: string, document: () => Promise<OpenAPIObject>): void {
  const router = express.Router();
  const mine = new RegExp(`^/(${escape(uiPath)}|${escape(jsonPath)})(/|$)`, 'i');
  let mounted: Promise<void> | undefined;
  const mount = async () => {
    const { SwaggerModule } = await applyOpenApiDecorators();
    const adapter = new ExpressAdapter(router);
    // What setup uses of the app: its HTTP adapter and static assets (Swagger UI's files), both onto the router.
    const onRouter = new Proxy(app, {
      get: (target, key) => {
        if (key === 'getHttpAdapter') return () => adapter;
        if (key === 'useStaticAssets') return (path: string, options: object) => adapter.useStaticAssets(path, options);
        return Reflect.get(target, key) as unknown;
      },
    });
    // validatorUrl null: no badge fetched from validator.swagger.io, which a cluster without egress cannot reach.
    SwaggerModule.setup(uiPath, onRouter, await document(), { jsonDocumentUrl: jsonPath, raw: ['json'], swaggerOptions: { validatorUrl: null } });
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!mine.test(req.path)) return next();
    mounted ??= mount().catch((error: unknown) => {
      mounted = undefined;
      throw error;
    });
    mounted.then(() => router(req, res, next), next);
  });
}

const escape = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
