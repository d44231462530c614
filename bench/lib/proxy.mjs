// A counting TCP proxy between the service and the API server: TLS passes through unchanged (the
// kubeconfig's CA and token still apply; the API server's certificate names 127.0.0.1), and the
// bytes each way are counted, so a figure can say how much the service (and the helm processes it
// starts, which read the same kubeconfig) read from the API server over a stretch of time.
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

/**
 * Starts a proxy in front of `kubeconfig`'s server and writes `file`, the same kubeconfig pointing
 * at it. `bytes()` answers `{ down, up }` so far: down from the API server to its clients, up the other way.
 */
export async function startCountingProxy(kubeconfig, file) {
  const text = readFileSync(kubeconfig, 'utf8');
  const match = /server:\s*(https?:\/\/\S+)/.exec(text);
  if (!match) throw new Error(`no server: line in ${kubeconfig}`);
  const target = new URL(match[1]);
  const counted = { down: 0, up: 0 };
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 443) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.on('data', (chunk) => (counted.down += chunk.length));
    client.on('data', (chunk) => (counted.up += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `${target.protocol}//${target.hostname}:${server.address().port}`;
  writeFileSync(file, text.replace(match[0], `server: ${url}`), { mode: 0o600 });
  return {
    kubeconfig: file,
    bytes: () => ({ ...counted }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
