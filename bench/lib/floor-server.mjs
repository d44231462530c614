// A floor for the reads and MCP figures: a server in a process of its own that does none of the
// service's work and answers with the bytes the service answered, recorded beforehand. What it
// costs is what any server of its kind costs on this machine, measured the same way as the service.
//
//   node bench/lib/floor-server.mjs node '<answers JSON>'   node:http, replays REST and MCP answers
//   node bench/lib/floor-server.mjs nest '<answers JSON>'   a Nest app (Express), one GET route
//
// answers: { rest: <the agent's JSON text>, mcp?: { initialize: {type, text}, call: {type, text} } }
// It prints its port on stdout and runs until SIGTERM.
import { createServer } from 'node:http';

const [kind, json] = process.argv.slice(2);
const answers = JSON.parse(json);
const ROUTE = '/api/v1/agents/:namespace/:name';

const port = kind === 'nest' ? await nest() : await replay();
process.stdout.write(`${port}\n`);

/** node:http: GET answers the REST bytes; POST /mcp answers initialize and tools/call with the recorded answers (the request's id put in), a notification 202. */
async function replay() {
  const call = answers.mcp && JSON.parse(answers.mcp.call.text);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url.startsWith('/api/')) return send(res, 'application/json; charset=utf-8', answers.rest);
      if (req.url !== '/mcp' || !answers.mcp) return res.writeHead(404).end();
      if (req.method === 'DELETE') return res.writeHead(200).end();
      if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST, DELETE' }).end();
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (message.id === undefined) return res.writeHead(202).end();
      if (message.method === 'initialize') return send(res, answers.mcp.initialize.type, answers.mcp.initialize.text);
      send(res, answers.mcp.call.type, JSON.stringify({ ...call, id: message.id }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
  return server.address().port;
}

function send(res, type, text) {
  res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(text), 'mcp-session-id': 'floor' }).end(text);
}

/** The service's framework with nothing of the service: Nest on Express, one controller returning the agent (serialized by Express, as the service's is). */
async function nest() {
  await import('reflect-metadata');
  const { Controller, Get, Module, Param } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const agent = JSON.parse(answers.rest);
  // What the decorators `@Controller('api/v1') class { @Get(ROUTE) get(@Param() ref) }` would write, in plain JavaScript.
  class AgentsController {
    get() {
      return agent;
    }
  }
  Param()(AgentsController.prototype, 'get', 0);
  Get(ROUTE.slice('/api/v1/'.length))(AgentsController.prototype, 'get', Object.getOwnPropertyDescriptor(AgentsController.prototype, 'get'));
  Controller('api/v1')(AgentsController);
  class FloorModule {}
  Module({ controllers: [AgentsController] })(FloorModule);
  const app = await NestFactory.create(FloorModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  return app.getHttpServer().address().port;
}
