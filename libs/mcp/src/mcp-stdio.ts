import { Logger, type INestApplicationContext } from '@nestjs/common';
import { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { localPrincipal } from '@app/auth';
import { AppConfig } from '@app/common';
import { refusedToolCall } from './forbidden-arguments.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpRegistry } from './mcp.registry.js';

/**
 * Serves one MCP session over this process's stdin/stdout (stdout carries only JSON-RPC: logs
 * go to stderr). `query` selects the toolsets as a /mcp URL's query would. Resolves when
 * the client closes stdin.
 */
export async function serveMcpStdio(app: INestApplicationContext, query: string): Promise<void> {
  const registry = app.get(McpRegistry);
  const toolsets = registry.select(query);
  // The local user (AUTH_STDIO_SUBJECT), through the same policy as every other caller.
  const principal = localPrincipal(app.get(AppConfig).AUTH_STDIO_SUBJECT);
  const server = await app.get(McpServerFactory).create(registry.parse(query), 'mcp-stdio', principal);
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  // Each line is read raw before the SDK parses it: its parsing drops __proto__ from arguments.
  // Answers the SDK never sees (a screened tools/call, a bad line) go on stdout as it writes its own: a JSON line each.
  const answer = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const input = screenedInput(answer);
  process.stdin.pipe(input);
  const transport = new StdioServerTransport(input, process.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  input.once('end', () => void transport.close());
  await server.connect(transport);
  // A line that is not JSON, or not JSON-RPC, is answered as the HTTP door answers it, not dropped.
  const logger = new Logger('MCP');
  server.onerror = (error) => {
    const code = error instanceof SyntaxError ? -32700 : error.name === 'ZodError' ? -32600 : undefined;
    if (code === undefined) return logger.warn(`stdio transport: ${error.message}`);
    const message = code === -32700 ? `Parse error: the line is not valid JSON (${error.message})` : 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message';
    // JSON-RPC answers a message whose id could not be read with id null, which the SDK's message type does not allow.
    answer({ jsonrpc: '2.0', id: null, error: { code, message } });
  };
  logger.log(`serving MCP over stdio: toolsets ${toolsets.active.join(', ')}${toolsets.unknown.length > 0 ? `; unknown ${toolsets.unknown.join(', ')}` : ''}`);
  await closed;
}

/** stdin line by line: a tools/call with __proto__ or constructor in its arguments is answered here, the rest passes. */
function screenedInput(answer: (message: object) => void): Transform {
  let pending = '';
  // A read can end inside a character of several bytes: the decoder keeps its first bytes for the next read.
  const decoder = new StringDecoder('utf8');
  const screen = (line: string): string | null => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return line; // the SDK answers what is not JSON
    }
    const refused = refusedToolCall(message);
    if (refused === null) return line;
    answer({ jsonrpc: '2.0', id: refused.id, result: refused.result });
    return null;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      pending += decoder.write(chunk);
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      const passed = lines.map(screen).filter((l): l is string => l !== null);
      done(null, passed.length > 0 ? `${passed.join('\n')}\n` : undefined);
    },
    flush(done) {
      pending += decoder.end();
      const last = pending ? screen(pending) : null;
      // The SDK reads whole lines: the last one, sent without a newline before stdin closed, gets one.
      done(null, last === null ? undefined : `${last}\n`);
    },
  });
}
