import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

/** The OpenAPI document of the REST door, with keys sorted so the committed file is stable. */
export function buildOpenApi(app: INestApplication, version: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('agent-manager')
    .setDescription('Create, update, validate, roll back, delete and read kagent agents (Generic agent chart releases) with a Muster toolset.')
    .setVersion(version)
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addServer('/', 'This agent-manager (paths are relative to where the document is served)')
    .addTag('agents', 'kagent agents as helm releases of the Generic agent chart: create, read, update, validate, roll back, delete')
    .build();
  return sortKeys(SwaggerModule.createDocument(app, config, { operationIdFactory: (_c, method) => method })) as OpenAPIObject;
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
