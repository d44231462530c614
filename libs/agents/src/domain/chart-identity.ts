import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** A chart as agent records name it: its name and version, never the path or URL helm installed it from. */
export interface ChartIdentity {
  name: string;
  version: string | null;
}

/** A chart helm installs: `ref` as helm takes it, `version` when one was asked for (or helm reported it). */
export interface ChartUsed {
  ref: string;
  version?: string | null;
  /**
   * Set for a chart ChartSources resolved (@app/helm): the reference as configured or asked (an
   * oci://… one, where `ref` is its pulled copy), which the record keeps, and the chart's own name
   * and version, read from the copy helm installs.
   */
  source?: string;
  name?: string;
  chartVersion?: string | null;
}

/** Chart.yaml of local chart directories, read again when the file changes (a new release of the service). */
const chartFiles = new Map<string, { mtimeMs: number; identity: ChartIdentity | null }>();

/**
 * The chart's name and version: a local chart's from its Chart.yaml (a version asked for or reported
 * by helm wins), any other reference's (oci://…/agent, repo/agent) from its last segment.
 */
export function chartIdentity(chart: ChartUsed): ChartIdentity {
  if (chart.name !== undefined) return { name: chart.name, version: chart.version ?? chart.chartVersion ?? null };
  const local = chartFile(chart.ref);
  return { name: local?.name ?? chartNameOf(chart.ref), version: chart.version ?? local?.version ?? null };
}

/** The Agent row's chart columns for a chart a write used. */
export function chartColumns(chart: ChartUsed): { chartRef: string; chartName: string; chartVersion: string | null } {
  const identity = chartIdentity(chart);
  return { chartRef: chart.source ?? chart.ref, chartName: identity.name, chartVersion: identity.version };
}

/** The name a reference ends in (`/opt/agent-manager/charts/agent`, `oci://registry/charts/agent`, `./agent-0.6.0.tgz`: agent). */
export function chartNameOf(ref: string): string {
  const last = ref.replace(/\/+$/, '').split('/').pop() ?? '';
  return last.replace(/\.tgz$/, '').replace(/-v?\d+\.\d+\.\d+.*$/, '') || 'unknown';
}

function chartFile(ref: string): ChartIdentity | null {
  const file = join(ref, 'Chart.yaml');
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return null; // not a local chart directory
  }
  const known = chartFiles.get(file);
  if (known?.mtimeMs === mtimeMs) return known.identity;
  let identity: ChartIdentity | null = null;
  try {
    const meta = parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown } | null;
    if (typeof meta?.name === 'string' && meta.name !== '') identity = { name: meta.name, version: typeof meta.version === 'string' ? meta.version : null };
  } catch {
    // helm refuses such a chart itself; the name falls back to the reference's
  }
  chartFiles.set(file, { mtimeMs, identity });
  return identity;
}
