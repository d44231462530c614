/** One sample of a Prometheus text exposition (format 0.0.4). */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(?:,|$)/y;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * Parses the text format strictly: every line is a HELP, a TYPE or a sample of a declared family
 * (a histogram's _bucket, _sum and _count belong to it); anything else throws naming the line.
 */
export function parsePrometheusText(text: string): { samples: PromSample[]; types: Map<string, string> } {
  const types = new Map<string, string>();
  const samples: PromSample[] = [];
  text.split('\n').forEach((line, at) => {
    const fail = (why: string) => new Error(`line ${at + 1} of the exposition ${why}: ${line}`);
    if (line === '' || line.startsWith('# HELP ')) return;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
    if (type) {
      if (!TYPES.has(type[2])) throw fail('names an unknown type');
      types.set(type[1], type[2]);
      return;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw fail('is not a sample');
    const [, name, body = '', raw] = match;
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(family)) throw fail('belongs to no declared family');
    const labels: Record<string, string> = {};
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const label = LABEL.exec(body);
      if (!label) throw fail('has malformed labels');
      labels[label[1]] = label[2].replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw fail('has a value that is not a number');
    samples.push({ name, labels, value });
  });
  return { samples, types };
}
