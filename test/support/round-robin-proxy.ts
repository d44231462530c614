import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';

export interface RoundRobinProxy {
  url: string;
  /**
   * Which backend (index) each request was sent to, in the order they arrived (a refused try not
   * counted), and the status the backend answered once its response headers arrived.
   */
  served: { method: string; backend: number; status?: number }[];
  close(): Promise<void>;
}

/**
 * A plain round-robin load balancer in front of replicas, as a Kubernetes Service without session
 * affinity: every HTTP request (not connection) goes to the next backend. A backend that refuses
 * the connection is skipped from then on, as a Service stops routing to a pod whose endpoint was
 * removed; the request goes to the next one (its body is buffered for that).
 */
export async function startRoundRobinProxy(backends: string[]): Promise<RoundRobinProxy> {
  const targets = backends.map((b) => new URL(b));
  const dead = new Set<number>();
  const served: RoundRobinProxy['served'] = [];
  let next = 0;
  const pick = (): number => {
    for (let i = 0; i < targets.length; i++) {
      const at = (next + i) % targets.length;
      if (!dead.has(at)) {
        next = at + 1;
        return at;
      }
    }
    return -1;
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const forward = (): void => {
      const at = pick();
      if (at < 0) {
        res.writeHead(503).end('no backend left');
        return;
      }
      const target = targets[at];
      const entry: RoundRobinProxy['served'][number] = { method: req.method ?? '', backend: at };
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false },
        (answer: IncomingMessage) => {
          entry.status = answer.statusCode;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.once('error', () => res.destroy());
        },
      );
      served.push(entry);
      upstream.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ECONNREFUSED' && !res.headersSent) {
          served.splice(served.indexOf(entry), 1);
          dead.add(at);
          forward();
        } else {
          res.destroy();
        }
      });
      res.once('close', () => upstream.destroy());
      upstream.end(body);
    };
    forward();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
