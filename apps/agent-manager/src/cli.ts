import { Caller, ConfigError, loadConfig, type AppConfig } from '@app/common';
import { Reconciler, ShutdownGate } from '@app/agents';
import { serveMcpStdio } from '@app/mcp';
import { Tracing } from '@app/telemetry';
import { createApp } from './app.factory.js';
import { exitOnFatal, oneLine, startStep } from './startup.js';

const USAGE = `usage: agent-manager <command>

  serve                        the HTTP service: REST under /api/v1, MCP at /mcp (as npm start)
  mcp [--toolsets <selection>] one MCP session over stdin/stdout, for a client that spawns it;
                               logs go to stderr (warnings and errors; LOG_LEVEL=debug for more).
                               <selection> is written like /mcp's query:
                               revisions, only=agents, without=agents&revisions, ...
                               (default: MCP_DEFAULT_TOOLSETS, else the default toolsets)
  store rebuild                adopts every release of the agent chart the store does not know
                               (after the store was lost), each with its helm history as revisions

Settings come from the environment as for the service (DATABASE_URL, KUBECONFIG, AGENT_CHART, ...).`;

/**
 * The settings of a command: as the service's, except that a command never runs the reconciler,
 * the recovery sweep or the watches (backgroundWork): that is the serving replicas' job, and it
 * would hold a stdio session or a store rebuild open while it reconciles the whole cluster.
 */
function config(): AppConfig {
  try {
    return Object.assign(loadConfig(), { RECONCILE_AUTOMATIC: false, backgroundWork: false });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`agent-manager: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

/** The value of --toolsets (`--toolsets x` or `--toolsets=x`), without a leading "?". */
function toolsetsOption(args: string[]): string {
  const at = args.findIndex((a) => a === '--toolsets' || a.startsWith('--toolsets='));
  if (at < 0) return '';
  const value = args[at].includes('=') ? args[at].slice('--toolsets='.length) : args[at + 1];
  if (value === undefined) {
    console.error(`agent-manager: --toolsets needs a value\n\n${USAGE}`);
    process.exit(2);
  }
  return value.replace(/^\?/, '');
}

async function mcp(args: string[]): Promise<void> {
  const unknown = args.filter((a, i) => !(a === '--toolsets' || a.startsWith('--toolsets=') || (i > 0 && args[i - 1] === '--toolsets')));
  if (unknown.length > 0) {
    console.error(`agent-manager mcp: unknown argument ${unknown.join(' ')}\n\n${USAGE}`);
    process.exit(2);
  }
  const query = toolsetsOption(args);
  // Built as for HTTP (the same modules, tools and schemas), initialised, never listening.
  const settings = config();
  await Tracing.start();
  // API_TOKENS_FILE and AUTHZ_POLICY_FILE are read while the app is built, BLUEPRINTS_FILE at init.
  const app = await startStep(async () => {
    const built = await createApp(settings, { logger: 'stderr' });
    await built.init();
    return built;
  }, settings);
  await serveMcpStdio(app, query);
  // The client went away: let writes it started finish (as on SIGTERM) before the store closes.
  await app.get(ShutdownGate).drain(settings.SHUTDOWN_TIMEOUT_SECONDS * 1000);
  await app.close();
  await Tracing.shutdown();
}

/** `store rebuild`: the app initialised (never listening), every unknown release of the agent chart adopted. */
async function storeRebuild(args: string[]): Promise<void> {
  if (args.length !== 1 || args[0] !== 'rebuild') {
    console.error(`agent-manager store: unknown argument ${args.join(' ') || '(none)'}\n\n${USAGE}`);
    process.exit(2);
  }
  const settings = config();
  const app = await startStep(async () => {
    const built = await createApp(settings, { logger: 'stderr' });
    await built.init();
    return built;
  }, settings);
  try {
    const { adopted, skipped } = await app.get(Reconciler).rebuild(Caller.internal());
    for (const name of adopted) console.log(`adopted ${name}`);
    for (const skip of skipped) console.error(`skipped ${skip.release}: ${skip.why}`);
    console.log(`store rebuild: ${adopted.length} adopted, ${skipped.length} skipped`);
    process.exitCode = skipped.length > 0 ? 1 : 0;
  } catch (error) {
    // The releases could not be listed (the cluster unreachable, helm refused): nothing was adopted.
    console.error(`agent-manager store rebuild: nothing adopted: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    await app.close();
  }
}

async function main(argv: string[]): Promise<void> {
  exitOnFatal();
  const [command, ...args] = argv;
  if (command === 'store') return storeRebuild(args);
  if (command === 'mcp') return mcp(args);
  if (command === 'serve') {
    await import('./main.js');
    return;
  }
  console.error(command === undefined || command === '--help' || command === '-h' ? USAGE : `agent-manager: unknown command ${command}\n\n${USAGE}`);
  process.exit(command === undefined || command === '--help' || command === '-h' ? 0 : 2);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`agent-manager: failed: ${oneLine(error)}`);
  process.exit(1);
});
