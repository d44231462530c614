import { Logger } from '@nestjs/common';
import { Metrics, Tracing } from '@app/telemetry';
import { isReleaseNotFound, type HelmClientOptions } from './helm.client.js';

/** Flags whose value is a credential: their value never reaches a log line or a span. */
const SECRET_FLAG = /^--(kube-token|password|token)$/;
/** Subcommands whose "release: not found" the client takes as an answer (no release); for a rollback it is a failure. */
const ANSWERS_NOT_FOUND = new Set(['status', 'uninstall', 'history', 'get']);

/**
 * Each helm process as a child span (`helm <subcommand>`), a duration sample per subcommand and
 * outcome, and one log line with its arguments (values travel in a file: its path is logged,
 * never what it holds) and how long it ran.
 */
export function observeHelm(metrics: Metrics): NonNullable<HelmClientOptions['observe']> {
  const logger = new Logger('Helm');
  return async (args, spawn) => {
    const subcommand = args[0] ?? 'unknown';
    const shown = args.map((arg, at) => (at > 0 && SECRET_FLAG.test(args[at - 1]) ? '[redacted]' : arg));
    const span = Tracing.begin(`helm ${subcommand}`, { kind: 'client', attributes: { 'helm.subcommand': subcommand, 'process.command_args': ['helm', ...shown] } });
    const started = process.hrtime.bigint();
    let exitCode = 127;
    // "release: not found" (status, history, uninstall of a release that is gone) is an answer the client expects.
    let notFound = false;
    try {
      const result = await (span ? span.run(spawn) : spawn());
      exitCode = result.exitCode;
      notFound = exitCode !== 0 && ANSWERS_NOT_FOUND.has(subcommand) && isReleaseNotFound(result.stderr);
      return result;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const ok = exitCode === 0 || notFound;
      metrics.helmProcess(subcommand, ok, seconds);
      span?.set({ 'process.exit.code': exitCode });
      span?.end(ok ? undefined : `helm ${subcommand} exited ${exitCode}`);
      const line = { msg: `helm ${subcommand}: exit ${exitCode}${notFound ? ' (release: not found)' : ''}`, subcommand, args: shown, exitCode, durationMs: Math.round(seconds * 1000) };
      if (ok) logger.log(line);
      else logger.warn(line);
    }
  };
}
