import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Caller, AppError, ConfigError, loadConfig, type AppConfig } from '@app/common';
import { Reconciler, ShutdownGate } from '@app/agents';
import { localPrincipal } from '@app/auth';
import { AgentAccess, parseInput, type CallerAccess } from '@app/doors';
import { serveMcpStdio } from '@app/mcp';
import { ExportQueryDto, mergeDocuments, splitDocument, TransferService, type ImportResultDto } from '@app/transfer';
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
  export [--namespace <ns>]... [--label <key=value>]... [--blueprint <name>]
         [--blueprint-history] [--per-agent <dir>]
                               the fleet as one YAML document on stdout (docs/contract.md §12), or
                               with --per-agent one file per agent under <dir> (and fleet.yaml)
  import <file|dir> [--dry-run] [--prune] [--json]
                               plans the document against the store and applies it item by item
                               as AUTH_STDIO_SUBJECT; --dry-run prints the plan only. Exits 1 when
                               an item conflicted, was refused or failed

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

/** The app a command runs on: built as for HTTP (the same modules, tools and schemas), initialised, never listening; logs to stderr. */
function commandApp(settings: AppConfig): ReturnType<typeof createApp> {
  return startStep(async () => {
    const built = await createApp(settings, { logger: 'stderr' });
    await built.init();
    return built;
  }, settings);
}

async function mcp(args: string[]): Promise<void> {
  const unknown = args.filter((a, i) => !(a === '--toolsets' || a.startsWith('--toolsets=') || (i > 0 && args[i - 1] === '--toolsets')));
  if (unknown.length > 0) {
    console.error(`agent-manager mcp: unknown argument ${unknown.join(' ')}\n\n${USAGE}`);
    process.exit(2);
  }
  const query = toolsetsOption(args);
  const settings = config();
  await Tracing.start();
  // API_TOKENS_FILE and AUTHZ_POLICY_FILE are read while the app is built, BLUEPRINTS_FILE at init.
  const app = await commandApp(settings);
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
  const app = await commandApp(settings);
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

/** Options of a command: `--flag`, `--name value` (repeatable ones collected), and the words left over. */
function options(args: string[], flags: string[], values: string[], command: string): { flags: Set<string>; values: Map<string, string[]>; words: string[] } {
  const found = { flags: new Set<string>(), values: new Map<string, string[]>(), words: [] as string[] };
  for (let i = 0; i < args.length; i += 1) {
    const [name, inline] = args[i].startsWith('--') && args[i].includes('=') ? [args[i].slice(0, args[i].indexOf('=')), args[i].slice(args[i].indexOf('=') + 1)] : [args[i], undefined];
    if (flags.includes(name) && inline === undefined) found.flags.add(name);
    else if (values.includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined) usageError(`agent-manager ${command}: ${name} needs a value`);
      found.values.set(name, [...(found.values.get(name) ?? []), value]);
    } else if (name.startsWith('-')) usageError(`agent-manager ${command}: unknown option ${name}`);
    else found.words.push(name);
  }
  return found;
}

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

/** An app for a one-shot command: initialised, never listening, no background work; closed by `run`'s end. */
async function withApp(run: (app: Awaited<ReturnType<typeof createApp>>, access: CallerAccess) => Promise<void>): Promise<void> {
  const settings = config();
  const app = await commandApp(settings);
  try {
    // The local user (AUTH_STDIO_SUBJECT), through the same policy as every other caller, as `mcp` acts.
    const principal = localPrincipal(settings.AUTH_STDIO_SUBJECT);
    const caller: Caller = { actor: principal.subject, door: 'internal', requestId: randomUUID(), principal };
    await run(app, app.get(AgentAccess).for(caller));
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    console.error(`agent-manager: ${error.message}`);
    for (const detail of error.details) console.error(`  ${detail.path}: ${detail.message}`);
    process.exitCode = error.code === 'invalid_request' ? 2 : 1;
  } finally {
    await app.close();
  }
}

/** `export`: the document on stdout, or one file per agent under --per-agent's folder. */
async function exportFleet(args: string[]): Promise<void> {
  const found = options(args, ['--blueprint-history'], ['--namespace', '--label', '--blueprint', '--per-agent'], 'export');
  if (found.words.length > 0) usageError(`agent-manager export: unknown argument ${found.words.join(' ')}`);
  await withApp(async (app, access) => {
    await access.authorize('export_agents', { namespace: '*' });
    const query = parseInput(ExportQueryDto, {
      namespace: found.values.get('--namespace'),
      label: found.values.get('--label'),
      blueprint: found.values.get('--blueprint')?.at(-1),
      blueprintHistory: found.flags.has('--blueprint-history'),
    });
    const { document, yaml } = await app.get(TransferService).export(query);
    const dir = found.values.get('--per-agent')?.at(-1);
    if (dir === undefined) {
      process.stdout.write(yaml);
      return;
    }
    for (const file of splitDocument(document)) {
      mkdirSync(dirname(join(dir, file.path)), { recursive: true });
      writeFileSync(join(dir, file.path), file.text);
    }
    console.error(`export: ${document.agents.length} agents and ${document.blueprints.length} blueprints written under ${dir}`);
  });
}

/** The YAML files of a folder (what export --per-agent wrote), by path. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => join(dir, name))
    .sort();
}

/** `import`: the plan per item (and what became of it), a summary line; exit 1 when anything conflicted, was refused or failed. */
async function importFleet(args: string[]): Promise<void> {
  const found = options(args, ['--dry-run', '--prune', '--json'], [], 'import');
  if (found.words.length !== 1) usageError(`agent-manager import: name one file or folder (got ${found.words.length})`);
  const [path] = found.words;
  let document: unknown;
  try {
    document = statSync(path).isDirectory()
      ? mergeDocuments(yamlFiles(path).map((file) => ({ path: relative(path, file), text: readFileSync(file, 'utf8') })))
      : readFileSync(path, 'utf8');
  } catch (error) {
    if (!(error instanceof AppError)) usageError(`agent-manager import: cannot read ${path}: ${(error as Error).message}`);
    console.error(`agent-manager import: ${error.message}`);
    for (const detail of error.details) console.error(`  ${detail.path}: ${detail.message}`);
    process.exit(2);
  }
  await withApp(async (app, access) => {
    await access.authorize('import_agents');
    const result = await app.get(TransferService).import(access, { document, dryRun: found.flags.has('--dry-run'), ...(found.flags.has('--prune') && { prune: true }) });
    if (found.flags.has('--json')) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else printImport(result);
    process.exitCode = ['conflict', 'refused', 'failed'].some((r) => (result.summary[r] ?? 0) > 0) ? 1 : 0;
  });
}

function printImport(result: ImportResultDto): void {
  for (const item of result.items) {
    const what = item.kind === 'agent' ? `agent ${item.namespace}/${item.name}` : `blueprint ${item.name}`;
    const fields = item.changes.length > 0 && item.action !== 'unchanged' ? ` (${item.changes.map((c) => c.path).join(', ')})` : '';
    const why = item.error ? `: ${item.error.message}` : item.reason ? `: ${item.reason}` : '';
    console.log(`${what}: ${item.action}${fields} → ${item.result}${item.operationId ? ` [operation ${item.operationId}]` : ''}${why}`);
  }
  const counts = Object.entries(result.summary).map(([name, count]) => `${count} ${name}`).join(', ');
  console.log(`import${result.dryRun ? ' (dry run)' : ''}: ${counts || 'nothing in the document'}`);
}

async function main(argv: string[]): Promise<void> {
  exitOnFatal();
  const [command, ...args] = argv;
  if (command === 'store') return storeRebuild(args);
  if (command === 'export') return exportFleet(args);
  if (command === 'import') return importFleet(args);
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
