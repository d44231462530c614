// Runs before each suite file (jest.config.mjs, setupFiles), in the jest worker that ran the suites
// before it. Jest loads a suite's modules afresh, so every AsyncLocalStorage they made stays behind
// when the suite ends, enabled: jest-circus's own (one per suite file), the service's operation
// context, koa's in the OIDC issuer. Node 20 keeps every enabled store in one process-wide list and
// walks it for each new promise, so a worker's 70th suite paid 70 walks per promise for the 69
// before it (about 7 % of the e2e suites' CPU). The stores earlier suites enabled are turned off
// here; nothing of those suites runs any more. A node without the list (AsyncContextFrame, Node 24)
// has no `_enable` and nothing to turn off.
import { AsyncLocalStorage } from 'node:async_hooks';

const ENABLED = Symbol.for('agent-manager.test.enabled-async-stores');

interface StorePrototype {
  _enable?: (this: AsyncLocalStorage<unknown>) => void;
  [ENABLED]?: Set<AsyncLocalStorage<unknown>>;
}

const prototype = AsyncLocalStorage.prototype as unknown as StorePrototype;
const enabled = prototype[ENABLED];
if (enabled) {
  for (const store of enabled) store.disable();
  enabled.clear();
} else if (typeof prototype._enable === 'function') {
  const stores = new Set<AsyncLocalStorage<unknown>>();
  const enable = prototype._enable;
  prototype._enable = function (this: AsyncLocalStorage<unknown>) {
    stores.add(this);
    enable.call(this);
  };
  prototype[ENABLED] = stores;
}
