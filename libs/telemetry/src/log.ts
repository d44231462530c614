import { createRequire } from 'node:module';
import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Level, type Logger as Pino, type LoggerOptions } from 'pino';
import { OperationContexts, type LogFormat, type LogLevel } from '@app/common';

export type { Logger as Pino } from 'pino';

/** LOG_LEVEL's words (Nest's) as pino's levels. */
const LEVELS: Record<LogLevel, Level> = { error: 'error', warn: 'warn', log: 'info', debug: 'debug', verbose: 'trace' };

/**
 * Fields no log line carries, wherever they are logged from: credentials, and what a caller wrote
 * into an agent (annotation values, chart values, the system message). Bodies are never logged.
 */
export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  'token',
  '*.token',
  'password',
  '*.password',
  'annotations',
  '*.annotations',
  'values',
  '*.values',
  'systemMessage',
  '*.systemMessage',
  'body',
  '*.body',
];

export interface LogOptions {
  level: LogLevel;
  /** Unset: pretty on a terminal, JSON lines otherwise. */
  format?: LogFormat;
  /** stdio mode logs to stderr: stdout carries only MCP messages. */
  stream: 'stdout' | 'stderr';
  /** No line at all (tests that host the app). */
  silent?: boolean;
  /** Where JSON lines go instead of `stream` (specs). */
  destination?: DestinationStream;
}

/** The fields of the current call every line carries (none for the service's own work). */
function callFields(): Record<string, unknown> {
  const context = OperationContexts.active();
  if (!context || context.door === 'internal') return {};
  return {
    requestId: context.requestId,
    traceId: context.traceId,
    door: context.door,
    subject: context.principal?.subject ?? context.facts.subject,
    operation: context.facts.operation,
    agent: context.facts.agent,
  };
}

/** The process's logger: JSON lines (or pretty on a terminal) on stdout, or stderr in stdio mode. */
export function createLog(options: LogOptions): Pino {
  const fd = options.stream === 'stderr' ? 2 : 1;
  const tty = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  const format = options.format ?? (tty ? 'pretty' : 'json');
  const settings: LoggerOptions = {
    level: options.silent ? 'silent' : LEVELS[options.level],
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    mixin: callFields,
    // Log stores read "level":"warn" without a table of pino's numbers; pino-pretty reads the numbers.
    ...(format === 'json' && { formatters: { level: (label: string) => ({ level: label }) } }),
  };
  return pino(settings, options.destination ?? (format === 'pretty' ? prettyStream(fd, tty) : pino.destination({ dest: fd, sync: true })));
}

/** pino-pretty in this thread (no worker at start), colours only on a terminal. */
function prettyStream(fd: number, colorize: boolean): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: object) => DestinationStream;
  return pretty({ destination: fd, sync: true, colorize, ignore: 'pid,hostname,context', messageFormat: '{if context}[{context}] {end}{msg}', translateTime: 'SYS:HH:MM:ss.l' });
}

/**
 * Nest's logger interface over pino: every `new Logger(context)` of the code base writes through it.
 * A message that is an object becomes the line's fields (its `msg` the message).
 */
export class PinoNestLogger implements LoggerService {
  constructor(readonly pino: Pino) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params, true);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params, true);
  }

  /** Nest passes the logger's context last, and for errors a stack before it. */
  private write(level: Level, message: unknown, params: unknown[], stackFirst = false): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const fields: Record<string, unknown> = context ? { context } : {};
    if (stackFirst && typeof rest[0] === 'string') fields.stack = rest[0];
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      const { msg, ...more } = message as { msg?: unknown };
      this.pino[level]({ ...fields, ...more }, typeof msg === 'string' ? msg : '');
    } else {
      this.pino[level](fields, String(message));
    }
  }
}
