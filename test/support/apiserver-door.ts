import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A TCP door in front of the run's shared API server, for a suite that needs the API server out
 * of reach of the service under test and back again: the service and its helm reach the server
 * through the door (`kubeconfig`), and `shut()` drops every connection through it and refuses new
 * ones ("connection refused", what they meet when the API server is down), until `open()` listens
 * again on the same port. The server the other suites share keeps running, so such a suite needs
 * no control plane of its own (about 7 CPU-seconds to start, and as many to restart its API
 * server). A fault that must freeze or kill the API server process itself still needs
 * TestCluster.ownControlPlane().
 */
export class ApiServerDoor {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(
    /** A copy of the cluster's kubeconfig whose server is the door (the API server's certificate names 127.0.0.1). */
    readonly kubeconfig: string,
    private readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** A door to the API server `kubeconfig` names, open. */
  static async before(kubeconfig: string): Promise<ApiServerDoor> {
    const text = readFileSync(kubeconfig, 'utf8');
    const server = /^\s*server: https:\/\/(127\.0\.0\.1):(\d+)\s*$/m.exec(text);
    if (!server) throw new Error(`${kubeconfig} names no https://127.0.0.1:<port> server for a door to stand before`);
    const listener = await listen(0);
    const port = (listener.address() as { port: number }).port;
    const file = join(mkdtempSync(join(tmpdir(), 'agent-manager-door-')), 'kubeconfig');
    writeFileSync(file, text.replace(server[0], server[0].replace(`:${server[2]}`, `:${port}`)), { mode: 0o600 });
    const door = new ApiServerDoor(file, port, { host: server[1], port: Number(server[2]) });
    door.serve(listener);
    return door;
  }

  /** The API server out of reach: open connections dropped, new ones refused. */
  async shut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The API server in reach again, on the same port. */
  async open(): Promise<void> {
    if (!this.server) this.serve(await listen(this.port));
  }

  private serve(listener: Server): void {
    this.server = listener;
    listener.on('connection', (client) => {
      const upstream = createConnection(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined); // the other side's close ends the pair below
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
  }
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
