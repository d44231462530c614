// @ts-check
// The manifest reader's worker thread (manifest-reader.ts starts it by path): the `yaml` package
// needs tens of seconds for some large manifests (it is quadratic in the keys of one mapping),
// which must never block the event loop.
//
// Plain JavaScript, type-checked by tsc (checkJs) and linted as the TypeScript sources are, so that
// the same file runs from the sources (jest), from tsc's output and from the bundle (dist/service,
// where scripts/bundle.mjs copies it) without a build step of its own.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

if (!parentPort) throw new Error('manifest-reader-worker.mjs runs as a worker thread of manifest-reader.ts');
const port = parentPort;
// The `yaml` the service resolved (workerData.yaml, a path): the bundle has its own copy inside,
// and the worker loads the package's from node_modules.
/** @type {typeof import('yaml').parseAllDocuments} */
const parseAllDocuments = createRequire(import.meta.url)(workerData.yaml).parseAllDocuments;

/**
 * What a thrown value says, as the service reports it.
 * @param {any} error whatever the parser threw
 */
const messageOf = (error) => String((error && error.message) || error);

port.on('message', (/** @type {{ id: number, manifest: string }} */ { id, manifest }) => {
  try {
    let agent = null;
    for (const doc of parseAllDocuments(manifest, { uniqueKeys: false })) {
      if (doc.errors.length > 0) throw doc.errors[0];
      const object = doc.toJSON();
      // The agent's own object: chart 0.x's Agent, or chart 1.x's AgentTemplate.
      if (object && (object.kind === 'Agent' || object.kind === 'AgentTemplate') && String(object.apiVersion).startsWith('kagent.dev/')) {
        agent = object;
        break;
      }
    }
    port.postMessage({ id, agent });
  } catch (error) {
    port.postMessage({ id, error: messageOf(error) });
  }
});
