import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ERROR_STATUS } from '@app/common';
import { connect } from '../mcp/mcp-support.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

type Schema = Record<string, any>;
const RULES = ['type', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems', 'enum'];
const rules = (schema: Schema): Schema => Object.fromEntries(RULES.filter((k) => schema[k] !== undefined).map((k) => [k, schema[k]]));
const itemRules = (schema: Schema): Schema => ({ ...rules(schema), ...(schema.items ? { items: rules(schema.items) } : {}) });

/**
 * The served OpenAPI document against the service itself and its MCP twin: the rules the
 * document states (patterns, bounds, integers, enums) are the ones the service enforces and the
 * ones the MCP inputSchema states, and its examples are safe and truthful.
 */
describe('the OpenAPI contract', () => {
  let t: TestApp;
  let doc: Schema;
  let mcp: Client;
  let tools: Map<string, Schema>;

  beforeAll(async () => {
    t = await startTestApp();
    doc = (await call(t.url, 'GET', '/api/v1/openapi.json')).body;
    mcp = await connect(t.url, '?revisions');
    tools = new Map((await mcp.listTools()).tools.map((tool) => [tool.name, tool.inputSchema as Schema]));
  });

  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  it('states the same rules for the create arguments as the MCP inputSchema of create_agent', () => {
    const rest = doc.components.schemas.CreateAgentDto.properties;
    const tool = tools.get('create_agent')!.properties;
    for (const field of ['name', 'namespace', 'modelConfig', 'toolset', 'systemMessage', 'dryRun', 'requestId']) {
      expect({ field, rules: itemRules(rest[field]) }).toEqual({ field, rules: itemRules(tool[field]) });
    }
    expect(rules(rest.name)).toEqual({ type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', minLength: 1, maxLength: 53 });
    expect(rest.toolset.items.pattern).toBe('^(preset|server|workflow|tool):[^\\s,]+$');
  });

  it('states the list filters as list_agents takes them: status an enum, limit an integer from 1 to 100', () => {
    const params = Object.fromEntries(doc.paths['/api/v1/agents'].get.parameters.map((p: Schema) => [p.name, p.schema]));
    const tool = tools.get('list_agents')!.properties;
    expect(rules(params.status)).toEqual({ type: 'string', enum: ['active', 'deleted', 'all'] });
    expect(rules(params.limit)).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    for (const field of ['namespace', 'status', 'limit']) expect({ field, rules: rules(params[field]) }).toEqual({ field, rules: rules(tool[field]) });
  });

  it.each([
    ['incident-helper', true],
    ['a'.repeat(53), true],
    ['a'.repeat(54), false],
    ['Incident-Helper', false],
    ['incident_helper', false],
    ['-incident', false],
  ])('agrees with the service on the name %p (valid: %p)', async (name, valid) => {
    const schema = doc.components.schemas.CreateAgentDto.properties.name;
    const stated = new RegExp(schema.pattern).test(name) && name.length <= schema.maxLength;
    expect(stated).toBe(valid);
    const res = await call(t.url, 'POST', '/api/v1/agents', { name, namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:none'], dryRun: true });
    expect(res.status).toBe(valid ? 200 : 400);
  });

  it.each([
    ['limit=1.5', 400],
    ['limit=101', 400],
    ['limit=100', 200],
    ['status=archived', 400],
    ['status=deleted', 200],
  ])('refuses what the document refuses on the list: %s answers %d', async (query, status) => {
    expect((await call(t.url, 'GET', `/api/v1/agents?${query}`)).status).toBe(status);
  });

  it('gives every error response an example with the code of its status', () => {
    const seen: string[] = [];
    for (const [path, operations] of Object.entries<Schema>(doc.paths)) {
      for (const [method, operation] of Object.entries<Schema>(operations)) {
        for (const [status, response] of Object.entries<Schema>(operation.responses)) {
          if (Number(status) < 400) continue;
          const example = response.content['application/json'].example;
          expect({ at: `${method} ${path} ${status}`, status: ERROR_STATUS[example?.error?.code as keyof typeof ERROR_STATUS] }).toEqual({
            at: `${method} ${path} ${status}`,
            status: Number(status),
          });
          expect(example.error.message.length).toBeGreaterThan(20);
          seen.push(status);
        }
      }
    }
    expect(new Set(seen)).toEqual(new Set(['400', '401', '403', '404', '409', '412', '502', '503']));
  });

  it('offers dry runs without requestId as request examples, and the create one, sent unchanged, writes nothing', async () => {
    const bodies = Object.values<Schema>(doc.paths).flatMap((operations) =>
      Object.values<Schema>(operations).flatMap((op) => Object.values<Schema>(op.requestBody?.content['application/json'].examples ?? {})),
    );
    expect(bodies.length).toBeGreaterThanOrEqual(4);
    for (const { value } of bodies) expect(value).not.toHaveProperty('requestId');
    const create = doc.paths['/api/v1/agents'].post;
    const body = create.requestBody.content['application/json'].examples.dryRun.value;
    expect(body).toMatchObject({ name: 'incident-helper', namespace: 'agents', modelConfig: 'default-model-config', dryRun: true });
    const res = await call(t.url, 'POST', '/api/v1/agents', body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dryRun: true, agent: null });
    expect(res.body.manifests).toContain('kind: Agent');
    expect((await call(t.url, 'GET', '/api/v1/agents?status=all')).body.items).toEqual([]);
  });

  it('lists every operation once in Swagger UI: one tag each', () => {
    const tagged = Object.entries<Schema>(doc.paths).flatMap(([path, operations]) => Object.entries<Schema>(operations).map(([method, op]) => ({ at: `${method} ${path}`, tags: op.tags })));
    for (const { at, tags } of tagged) expect({ at, count: tags.length }).toEqual({ at, count: 1 });
    expect(doc.paths['/api/v1/operations'].get.tags).toEqual(['audit']);
  });

  it('writes no text Swagger UI would take for HTML and drop (such as "<version>")', () => {
    const html: string[] = [];
    const walk = (value: unknown, at: string): void => {
      if (typeof value === 'string' && /<[A-Za-z/!?]/.test(value.replace(/`[^`]*`/g, ''))) html.push(`${at}: ${value}`);
      else if (value && typeof value === 'object' && !at.endsWith('/example')) for (const [k, v] of Object.entries(value)) walk(v, `${at}/${k}`);
    };
    for (const key of ['paths', 'components', 'info', 'tags']) walk(doc[key], key);
    expect(html).toEqual([]);
  });

  it('describes the created (201) and dry-run (200) answers apart: agent required and never null on 201, always null on 200', () => {
    const ref = (status: string) => create()[status].content['application/json'].schema.$ref.split('/').pop();
    const create = () => doc.paths['/api/v1/agents'].post.responses;
    const created = doc.components.schemas[ref('201')];
    const dryRun = doc.components.schemas[ref('200')];
    expect(created.required).toEqual(expect.arrayContaining(['agent', 'dryRun']));
    expect(created.properties.agent.nullable).toBeUndefined();
    expect(created.properties.dryRun.enum).toEqual([false]);
    expect(dryRun.properties.agent).toMatchObject({ nullable: true, enum: [null] });
    expect(dryRun.properties.dryRun.enum).toEqual([true]);
  });
});
