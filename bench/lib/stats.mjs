// Samples, medians and the side-by-side table.
import { performance } from 'node:perf_hooks';

export function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { n: sorted.length, median, min: sorted[0], max: sorted.at(-1) };
}

/** Times one call (ms). */
export async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * Runs the contenders in turn, `rounds` times (A, B, A, B …, the first one alternating so
 * neither always runs on a warmer machine), and returns each one's summary (ms). Each summary
 * keeps its samples in round order (`samples`, left out of results.json) for `perRound`.
 */
export async function interleave(rounds, contenders) {
  const samples = contenders.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) samples[i].push(await time(() => contenders[i](round)));
  }
  return samples.map((own) => Object.defineProperty(summary(own), 'samples', { value: own, enumerable: false }));
}

/**
 * The ratio round by round (A_i / B_i of the same round, `invert`: B_i / A_i): its median and
 * quartiles. Both ran within moments of each other, so a slow spell of the machine weighs on
 * both sides of a round; how far the quartiles lie apart says how much one run's ratio of
 * medians can be trusted. Undefined unless both come from one `interleave`.
 */
export function perRound(a, b, invert = false) {
  if (!a?.samples || !b?.samples || a.samples.length !== b.samples.length) return undefined;
  const ratios = a.samples.map((x, i) => (invert ? b.samples[i] / x : x / b.samples[i])).sort((x, y) => x - y);
  const at = (q) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))];
  return { median: summary(ratios).median, p25: at(0.25), p75: at(0.75) };
}

const fmtNumber = (v, unit) => (unit === 'ms' && v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0));

export function fmt(s, unit = 'ms') {
  if (s === undefined || s === null) return '';
  if (typeof s === 'number') return `${fmtNumber(s, unit)} ${unit}`;
  if (s.n === 1) return `${fmtNumber(s.median, unit)} ${unit}`;
  return `${fmtNumber(s.median, unit)} ${unit} (${fmtNumber(s.min, unit)}–${fmtNumber(s.max, unit)})`;
}

/** Prints rows of {figure, a, b, ratio, rounds, target, met} as an aligned table. */
export function printTable(title, rows, head = ['figure', 'A', 'B', 'ratio', 'per round (p25–p75)', 'target', '']) {
  printGrid(title, head, rows.map((r) => [r.figure, r.a ?? '', r.b ?? '', r.ratio ?? '', r.rounds ?? '', r.target ?? '', r.met === undefined ? '' : r.met ? 'met' : 'MISSED']));
}

/** Prints rows of cells under `head` as an aligned table. */
export function printGrid(title, head, cells) {
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => String(c[i]).length)));
  const line = (c) => c.map((v, i) => String(v).padEnd(widths[i])).join('  ').trimEnd();
  console.log(`\n${title}`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}
