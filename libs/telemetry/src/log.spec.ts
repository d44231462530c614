import { describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { OperationContexts } from '@app/common';
import { createLog, PinoNestLogger } from './log.js';

/** A logger whose JSON lines are kept, parsed. */
function capture(): { lines: Record<string, unknown>[]; nest: PinoNestLogger } {
  const lines: Record<string, unknown>[] = [];
  const log = createLog({ level: 'debug', format: 'json', stream: 'stdout', destination: { write: (line: string) => lines.push(JSON.parse(line)) } });
  return { lines, nest: new PinoNestLogger(log) };
}

describe(PinoNestLogger.name, () => {
  it('writes a JSON line with the context, the level by name and the fields of an object message', () => {
    const { lines, nest } = capture();
    nest.warn({ msg: 'helm upgrade: exit 1', subcommand: 'upgrade', exitCode: 1 }, 'Helm');
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', context: 'Helm', msg: 'helm upgrade: exit 1', subcommand: 'upgrade', exitCode: 1 })]);
  });

  it("carries the current call's request id, trace id, subject, door, operation and agent; none outside a call", () => {
    const { lines, nest } = capture();
    const principal = { subject: 'token:ci', groups: [], method: 'token' as const };
    OperationContexts.run({ requestId: 'r-1', traceId: 'a'.repeat(32), door: 'rest', actor: 'token:ci', principal }, () => {
      OperationContexts.learn({ operation: 'create_agent', agent: 'team-a/helper' });
      nest.log('applied', 'WritePipeline');
    });
    nest.log('sweep', 'OperationRecovery');
    expect(lines[0]).toMatchObject({ requestId: 'r-1', traceId: 'a'.repeat(32), subject: 'token:ci', door: 'rest', operation: 'create_agent', agent: 'team-a/helper', msg: 'applied' });
    expect(Object.keys(lines[1])).not.toContain('requestId');
  });

  it('redacts credentials, annotations, values and bodies wherever they are logged', () => {
    const { lines, nest } = capture();
    nest.log({ msg: 'x', headers: { authorization: 'Bearer secret-1' }, token: 'secret-2', spec: { annotations: { a: 'secret-3' } }, values: { systemMessage: 'secret-4' }, body: 'secret-5' });
    expect(JSON.stringify(lines)).not.toMatch(/secret-/);
  });

  it('is what every `new Logger(context)` writes through once Nest uses it', () => {
    const { lines, nest } = capture();
    Logger.overrideLogger(nest);
    try {
      new Logger('Cluster').error('unreachable', 'Error: stack line');
    } finally {
      Logger.overrideLogger(false);
    }
    expect(lines).toEqual([expect.objectContaining({ level: 'error', context: 'Cluster', msg: 'unreachable', stack: 'Error: stack line' })]);
  });
});
