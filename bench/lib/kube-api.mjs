// A minimal client of the Kubernetes API for the benchmark's own calls (seeding, a hand edit):
// the kubeconfig's server, CA and token, over keep-alive HTTPS with a bounded number of sockets.
// The service under measurement uses its own client; this one only sets the scene.
import { Agent, request } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

/** `call(method, path, body?, contentType?)` answers `{ status, text, json }`; `close()` ends the sockets. */
export function kubeApi(kubeconfig, { maxSockets = 16 } = {}) {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const cluster = config.getCurrentCluster();
  const token = config.getCurrentUser()?.token;
  const agent = new Agent({ keepAlive: true, maxSockets, ca: cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined });
  const call = (method, path, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers = { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }) };
      request(new URL(path, cluster.server), { method, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode, text, json: text && /json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : undefined });
        });
        res.on('error', reject);
      })
        .on('error', reject)
        .end(payload);
    });
  /** Like `call`, but a status other than `ok` (or any 2xx) throws with the API server's message. */
  const must = async (method, path, body, contentType) => {
    const res = await call(method, path, body, contentType);
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.json?.message ?? res.text.slice(0, 300)}`);
    return res;
  };
  return { server: cluster.server, call, must, close: () => agent.destroy() };
}
