import type * as PromClient from 'prom-client';

/** The helm process pool's numbers (libs/helm's HelmPoolStats). */
export interface PoolNumbers {
  concurrency: number;
  inUse: number;
  queued: number;
  refused: number;
}

type Prom = (typeof PromClient)['default'];
type Instruments = ReturnType<typeof instruments>;
type Watchers = {
  pool?: () => PoolNumbers;
  sessions?: () => number;
  journal?: () => Promise<Record<string, number>>;
  leading?: () => boolean;
};

const PREFIX = 'agent_manager_';
/** Seconds: a read answered from the store takes milliseconds, a helm write with --wait minutes. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** prom-client's event loop delay statistics: until the delay histogram has a sample they are NaN or placeholders (min 9.2e9 s). */
const LAG_STATISTICS = /^nodejs_eventloop_lag_(min|max|mean|stddev|p50|p90|p99)_seconds /;

/**
 * The exposition without samples that have no value yet: prom-client writes NaN as `Nan`, which the
 * text format does not know (it spells `NaN`), and the event loop delay statistics hold
 * placeholders until the delay histogram has its first sample. Their HELP and TYPE lines stay.
 */
export function withoutUnsetSamples(text: string): string {
  const lines = text.split('\n');
  const lagUnset = lines.includes('nodejs_eventloop_lag_mean_seconds Nan');
  return lines.filter((line) => !line.endsWith(' Nan') && !(lagUnset && LAG_STATISTICS.test(line))).join('\n');
}

/**
 * The service's Prometheus metrics (served at /metrics). Labels are bounded sets (routes, tools,
 * helm subcommands, error codes), never agent names. prom-client loads after start, off the way
 * to /healthz: what is recorded before waits in a short backlog.
 */
export class Metrics {
  private instruments?: Instruments;
  private registry?: PromClient.Registry;
  private loading?: Promise<PromClient.Registry>;
  private readonly backlog: ((m: Instruments) => void)[] = [];
  private readonly watchers: Watchers = {};
  private blueprintTools = 0;

  /** Loads prom-client and builds the registry (once); the backlog is replayed into it. */
  load(): Promise<PromClient.Registry> {
    // prom-client is CommonJS: its module object is the import's default, whether node or the bundle loads it.
    this.loading ??= import('prom-client').then(({ default: prom }) => {
      const registry = new prom.Registry();
      prom.collectDefaultMetrics({ register: registry });
      this.instruments = instruments(prom, registry, this.watchers, () => this.blueprintTools);
      this.registry = registry;
      for (const record of this.backlog.splice(0)) record(this.instruments);
      return registry;
    });
    return this.loading;
  }

  /** The exposition (text format 0.0.4) and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    const registry = await this.load();
    return { contentType: registry.contentType, text: withoutUnsetSamples(await registry.metrics()) };
  }

  httpRequest(labels: { method: string; route: string; status: number; outcome: string }, seconds: number): void {
    this.record((m) => {
      const { method, route, outcome } = labels;
      m.httpRequests.inc({ method, route, outcome, status: String(labels.status) });
      m.httpDuration.observe({ method, route, outcome }, seconds);
    });
  }

  toolCall(tool: string, outcome: string, seconds: number): void {
    this.record((m) => {
      m.toolCalls.inc({ tool, outcome });
      m.toolDuration.observe({ tool, outcome }, seconds);
    });
  }

  helmProcess(subcommand: string, ok: boolean, seconds: number): void {
    this.record((m) => {
      m.helmDuration.observe({ subcommand, outcome: ok ? 'ok' : 'failed' }, seconds);
      if (!ok) m.helmFailures.inc({ subcommand });
    });
  }

  kubeRequest(verb: string, resource: string, outcome: string, seconds: number): void {
    this.record((m) => m.kubeDuration.observe({ verb, resource, outcome }, seconds));
  }

  storeQuery(model: string, operation: string, ok: boolean, seconds: number): void {
    this.record((m) => m.storeQuery.observe({ model, operation, outcome: ok ? 'ok' : 'failed' }, seconds));
  }

  storeTransaction(ok: boolean, seconds: number): void {
    this.record((m) => m.storeTransaction.observe({ outcome: ok ? 'ok' : 'failed' }, seconds));
  }

  /** How long a write waited for its agent's lock: `acquired`, or `refused` when another write kept it too long. */
  leaseWait(outcome: 'acquired' | 'refused', seconds: number): void {
    this.record((m) => m.leaseWait.observe({ outcome }, seconds));
  }

  idempotencyReplay(operation: string): void {
    this.record((m) => m.replays.inc({ operation }));
  }

  /** One agent's reconcile: the decision table's action and what became of it (done, planned, skipped, failed). */
  reconcilerAction(action: string, result: string): void {
    this.record((m) => m.reconcilerActions.inc({ action, result }));
  }

  /** A new finding on an agent the reconciler can only report (not repeated while it stays the same). */
  reconcilerFinding(finding: string): void {
    this.record((m) => m.reconcilerFindings.inc({ finding }));
  }

  /** One attempt to deliver a change event to a webhook: `delivered`, `failed` (tried again later) or `dead` (given up). */
  webhookDelivery(subscription: string, outcome: 'delivered' | 'failed' | 'dead'): void {
    this.record((m) => m.webhookDeliveries.inc({ subscription, outcome }));
  }

  reconcilerResync(): void {
    this.record((m) => m.reconcilerResyncs.inc());
  }

  /** The tools blueprints serve now (set whenever the blueprint toolset changes). */
  setBlueprintToolsServed(count: number): void {
    this.blueprintTools = count;
  }

  watchHelmPool(stats: () => PoolNumbers): void {
    this.watchers.pool = stats;
  }

  watchReconciler(leading: () => boolean): void {
    this.watchers.leading = leading;
  }

  watchMcpSessions(count: () => number): void {
    this.watchers.sessions = count;
  }

  /** Operations in the journal by state (the store's count, read at each scrape). */
  watchJournal(count: () => Promise<Record<string, number>>): void {
    this.watchers.journal = count;
  }

  private record(write: (m: Instruments) => void): void {
    if (this.instruments) write(this.instruments);
    else if (this.backlog.length < 10_000) this.backlog.push(write);
  }
}

function instruments(prom: Prom, registry: PromClient.Registry, watchers: Watchers, blueprintTools: () => number) {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new prom.Counter<L>({ name: PREFIX + name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets = REQUEST_BUCKETS) =>
    new prom.Histogram<L>({ name: PREFIX + name, help, labelNames, buckets, registers });
  const gauge = (name: string, help: string, collect: (this: PromClient.Gauge) => void | Promise<void>) => new prom.Gauge({ name: PREFIX + name, help, registers, collect });
  gauge('helm_slots', 'helm processes that may run at once (HELM_CONCURRENCY)', function () {
    if (watchers.pool) this.set(watchers.pool().concurrency);
  });
  gauge('helm_slots_in_use', 'helm processes running now', function () {
    if (watchers.pool) this.set(watchers.pool().inUse);
  });
  gauge('helm_queue_length', 'calls waiting for a helm slot', function () {
    if (watchers.pool) this.set(watchers.pool().queued);
  });
  new prom.Counter({
    name: `${PREFIX}helm_pool_refusals_total`,
    help: 'calls refused with 503 because no helm slot came free within HELM_QUEUE_SECONDS or the queue was full',
    registers,
    collect() {
      if (!watchers.pool) return;
      this.reset();
      this.inc(watchers.pool().refused);
    },
  });
  gauge('mcp_sessions_open', 'MCP sessions holding a GET stream on this replica (sessions themselves live in the store)', function () {
    if (watchers.sessions) this.set(watchers.sessions());
  });
  gauge('reconciler_leader', 'whether this replica is the elected reconciler (1) or only watches (0)', function () {
    if (watchers.leading) this.set(watchers.leading() ? 1 : 0);
  });
  gauge('blueprint_tools_served', 'tools served from blueprints', function () {
    this.set(blueprintTools());
  });
  new prom.Gauge({
    name: `${PREFIX}journal_operations`,
    help: 'operations in the journal by state (pending, succeeded, failed, superseded, refused), as the store counts them',
    labelNames: ['state'],
    registers,
    async collect() {
      if (!watchers.journal) return;
      this.reset();
      const counts = await watchers.journal().catch(() => ({}) as Record<string, number>);
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  return {
    httpRequests: counter('http_requests_total', 'HTTP requests answered, by route template, status and outcome (ok or the error code)', ['method', 'route', 'status', 'outcome']),
    httpDuration: histogram('http_request_duration_seconds', 'time to answer an HTTP request', ['method', 'route', 'outcome']),
    toolCalls: counter('mcp_tool_calls_total', 'MCP tool calls, by tool and outcome (ok or the error code)', ['tool', 'outcome']),
    toolDuration: histogram('mcp_tool_call_duration_seconds', 'time to answer an MCP tool call', ['tool', 'outcome']),
    helmDuration: histogram('helm_process_duration_seconds', 'time one helm process ran, by subcommand and outcome', ['subcommand', 'outcome']),
    helmFailures: counter('helm_process_failures_total', 'helm processes that exited non-zero or could not run, by subcommand', ['subcommand']),
    kubeDuration: histogram('kube_request_duration_seconds', 'time of a Kubernetes API call', ['verb', 'resource', 'outcome']),
    storeQuery: histogram('store_query_duration_seconds', 'time of one store query, by model and Prisma operation', ['model', 'operation', 'outcome'], STORE_BUCKETS),
    storeTransaction: histogram('store_transaction_duration_seconds', 'time of one store transaction', ['outcome'], STORE_BUCKETS),
    leaseWait: histogram('lease_wait_seconds', "time a write waited for its agent's lock", ['outcome']),
    replays: counter('idempotency_replays_total', 'writes answered from their idempotency key (a retry got the first answer)', ['operation']),
    reconcilerActions: counter('reconciler_actions_total', "the reconciler's decisions per agent and what became of them", ['action', 'result']),
    reconcilerFindings: counter('reconciler_findings_total', 'what the reconciler found wrong with an agent and could only report (drift, missing, failed, unmanaged, …), once per new finding', ['finding']),
    webhookDeliveries: counter('webhook_deliveries_total', 'attempts to deliver a change event to a webhook of WEBHOOKS_FILE, by subscription and outcome (delivered, failed: tried again later, dead: given up)', ['subscription', 'outcome']),
    reconcilerResyncs: counter('reconciler_resyncs_total', "the elected reconciler's full resyncs (every agent decided again)", []),
  };
}
