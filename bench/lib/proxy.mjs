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

/**
 * The same proxy, but ending TLS with the API server's own certificate and key (the test control
 * plane's pki/) and sending each request on over a TLS connection of its own, so the bytes can be
 * told apart per request kind: `byPath()` answers { 'GET /api/v1/secrets?watch': bytes, … } of
 * response bodies (namespaces and names folded into `*`, resourceVersion and continue dropped).
 * HTTP/1.1 only (helm's Go client falls back to it). A diagnostic: it costs the benchmark's own
 * process a TLS hop both ways, so figures are taken with startCountingProxy.
 */
export async function startPathProxy(kubeconfig, file, { cert, key }) {
  const { request, Agent, createServer: createHttpsServer } = await import('node:https');
  const { KubeConfig } = await import('@kubernetes/client-node');
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const cluster = config.getCurrentCluster();
  const target = new URL(cluster.server);
  const agent = new Agent({ keepAlive: true, ca: Buffer.from(cluster.caData, 'base64') });
  const counted = { down: 0, up: 0 };
  const paths = new Map();
  const server = createHttpsServer({ cert, key, ALPNProtocols: ['http/1.1'] }, (req, res) => {
    const kind = pathKind(req.method, req.url);
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      res.flushHeaders(); // a watch's headers go out before its first event
      answer.on('data', (chunk) => {
        counted.down += chunk.length;
        paths.set(kind, (paths.get(kind) ?? 0) + chunk.length);
      });
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.on('data', (chunk) => (counted.up += chunk.length));
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const text = readFileSync(kubeconfig, 'utf8');
  writeFileSync(file, text.replace(/server:\s*https?:\/\/\S+/, `server: https://127.0.0.1:${server.address().port}`), { mode: 0o600 });
  return {
    kubeconfig: file,
    bytes: () => ({ ...counted }),
    byPath: () => Object.fromEntries(paths),
    close: async () => {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}

/** A request's kind: method, path with namespaces and object names folded, and whether it watches. */
function pathKind(method, url) {
  const { pathname, searchParams } = new URL(url, 'https://x');
  const parts = pathname.split('/');
  for (let i = 0; i < parts.length; i++) if (parts[i - 1] === 'namespaces') parts[i] = '*';
  // /api/v1/namespaces/*/secrets/<name>, /apis/g/v/namespaces/*/agents/<name>: the object's name
  const resource = parts.lastIndexOf('*') + 1;
  if (resource > 0 && parts.length > resource + 1) parts[resource + 1] = '*';
  const flags = ['watch', 'labelSelector', 'fieldSelector'].filter((k) => searchParams.has(k) && searchParams.get(k) !== 'false');
  return `${method} ${parts.join('/')}${flags.length ? `?${flags.join('&')}` : ''}`;
}
