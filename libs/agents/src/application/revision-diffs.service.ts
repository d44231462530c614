import { Inject, Injectable, Optional } from '@nestjs/common';
import { AppError } from '@app/common';
import { ChartSources, HelmClient, type ChartSource } from '@app/helm';
import { KubeClient } from '@app/kube';
import type { AgentRefDto, RevisionDiffQueryDto } from '../api/requests.dto.js';
import type { RevisionDiffDto, RevisionDiffSideDto } from '../api/responses.dto.js';
import { readLive, type LiveReader } from '../cluster/live-agent.js';
import { ManifestReader } from '../cluster/manifest-reader.js';
import type { AgentSpec } from '../domain/agent-spec.js';
import { chartIdentity, type ChartUsed } from '../domain/chart-identity.js';
import { comparableObjects, specOfLive, type AgentObject } from '../domain/live-spec.js';
import { parseRevision, revisionBefore, type RevisionAt } from '../domain/revision-refs.js';
import { fieldChanges, manifestDiff } from '../domain/spec-diff.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import type { AgentRecord, RevisionRecord } from '../persistence/records.js';
import { WriteRunner } from '../runner/write-runner.js';

type Life = { agent: AgentRecord; revisions: RevisionRecord[] };

/** A side of a diff once found: a stored revision, the live object, or nothing (before the first create). */
type Side = { kind: 'revision'; life: number; entry: Life; record: RevisionRecord } | { kind: 'live'; life: number | null; entry: Life | null } | { kind: 'none' };

/**
 * Diffs between two revisions of an agent, of any of its lives, or between a revision and the live
 * object on the cluster (docs/contract.md §3): the spec fields that moved (domain/spec-diff.ts) and
 * the rendered manifests' unified diff, each revision rendered with helm template and the chart it
 * used. Reads the store, helm template and (for live) the cluster as the caller; never writes.
 */
@Injectable()
export class RevisionDiffs {
  constructor(
    private readonly repository: AgentsRepository,
    private readonly helm: HelmClient,
    @Inject(KubeClient) private readonly kube: LiveReader,
    private readonly manifests: ManifestReader,
    private readonly runner: WriteRunner,
    /** Resolves the chart a revision used (an OCI one pulled once per version); absent: the reference as recorded. */
    @Optional() private readonly charts?: ChartSources,
  ) {}

  async diff({ namespace, name }: AgentRefDto, query: RevisionDiffQueryDto): Promise<RevisionDiffDto> {
    const lives = await this.repository.revisionsOfAllLives(namespace, name);
    if (lives.length === 0) throw AppError.notFound(namespace, name);
    const active = lives.findIndex((l) => l.agent.state === 'active');
    if (query.life !== undefined && query.life > lives.length) {
      throw new AppError('not_found', `agent ${namespace}/${name} has had ${lives.length} life(s): life ${query.life} does not exist; list_agent_revisions with life=all lists them`, [
        { path: 'life', message: `from 1 to ${lives.length}` },
      ]);
    }
    const life = query.life ?? (active >= 0 ? active + 1 : lives.length);
    const to: Side = query.to === undefined || query.to === 'live'
      ? { kind: 'live', life: active >= 0 ? active + 1 : null, entry: active >= 0 ? lives[active] : null }
      : find(lives, parseRevision(query.to, life), 'to', namespace, name);
    const from: Side = query.from === undefined ? before(lives, to) : find(lives, parseRevision(query.from, life), 'from', namespace, name);
    return this.compare(namespace, name, from, to);
  }

  private async compare(namespace: string, name: string, from: Side, to: Side): Promise<RevisionDiffDto> {
    const id = `${namespace}/${name}`;
    const [fromChart, toChart] = await Promise.all([this.chartOf(from), this.chartOf(to)]);
    const [fromManifest, toManifest] = await Promise.all([this.render(namespace, name, from, fromChart), this.render(namespace, name, to, toChart)]);
    const fromSpec = specOf(from);
    let toSpec = specOf(to);
    let diff: string;
    if (to.kind === 'live') {
      // The live object against the agent's object in the revision's manifest, at the fields the chart sets.
      const applied = (await this.manifests.agentIn(fromManifest)) as AgentObject | null;
      const live = (await readLive(this.kube, applied, namespace, name)) as AgentObject | null;
      toSpec = live ? specOfLive(live, fromSpec) : null;
      const objects = comparableObjects(applied, live);
      diff = manifestDiff(id, objects.applied, objects.live, { from: label(from), to: 'live' });
    } else {
      diff = manifestDiff(id, fromManifest, toManifest, { from: label(from), to: label(to) });
    }
    const fields = fieldChanges(fromSpec, toSpec);
    return {
      namespace,
      name,
      from: view(from, fromSpec, fromChart),
      to: view(to, toSpec, toChart),
      changed: fields.length > 0 || diff !== '',
      fields,
      manifestDiff: diff,
    };
  }

  /** The manifests a revision's values render to with its chart; '' for live (read from the cluster) and for none. */
  private async render(namespace: string, name: string, side: Side, chart: ChartUsed | null): Promise<string> {
    if (side.kind !== 'revision' || !chart) return '';
    const source = await this.source(chart);
    return this.helm.template({ namespace, name }, source, side.record.values);
  }

  /**
   * The chart a revision used: the one the last chart move (a fleet rollout's, journaled) at or
   * before it applied; before a life's first move, the chart that move started from; else the
   * chart its agent records.
   */
  private async chartOf(side: Side): Promise<ChartUsed | null> {
    if (side.kind !== 'revision') return null;
    const journaled = side.entry.revisions.filter((r) => r.operationId !== null);
    const moves = await this.repository.chartMoves(journaled.map((r) => r.operationId!));
    const moved = journaled.filter((r) => moves.has(r.operationId!));
    const last = moved.filter((r) => r.revision <= side.record.revision).at(-1);
    if (last) {
      const { to } = moves.get(last.operationId!)!;
      return { ref: to.source ?? to.ref, version: to.chartVersion ?? to.version ?? null };
    }
    const next = moved.find((r) => r.revision > side.record.revision);
    const from = next && moves.get(next.operationId!)!.from;
    if (from) return from;
    return { ref: side.entry.agent.chartRef, version: side.entry.agent.chart.version };
  }

  /** What helm template is given for a recorded chart: resolved (an OCI chart pulled once per version), a local one without a version. */
  private async source(chart: ChartUsed): Promise<ChartSource> {
    const local = chart.ref.startsWith('/') || chart.ref.startsWith('.');
    const version = local ? undefined : (chart.version ?? undefined);
    if (!this.charts) return { ref: chart.ref, ...(version !== undefined && { version }) };
    return this.charts.resolve(chart.ref, version);
  }
}

/** The stored revision `at` names, or a 404 naming the field and what exists. */
function find(lives: Life[], at: RevisionAt, field: 'from' | 'to', namespace: string, name: string): Side {
  const entry = lives[at.life - 1];
  if (!entry) {
    throw new AppError('not_found', `${field}: agent ${namespace}/${name} has had ${lives.length} life(s), not ${at.life}: list_agent_revisions with life=all lists them`, [
      { path: field, message: `life ${at.life} does not exist (1 to ${lives.length})` },
    ]);
  }
  const record = entry.revisions.find((r) => r.revision === at.revision);
  if (!record) {
    const last = entry.revisions.at(-1)?.revision ?? 0;
    throw new AppError('not_found', `${field}: life ${at.life} of agent ${namespace}/${name} has revisions 1 to ${last}, not ${at.revision}: list_agent_revisions lists them`, [
      { path: field, message: `revision ${at.revision} does not exist in life ${at.life} (1 to ${last})` },
    ]);
  }
  return { kind: 'revision', life: at.life, entry, record };
}

/** The default `from`: the revision before `to` (domain/revision-refs.ts), or none before the very first. */
function before(lives: Life[], to: Side): Side {
  if (to.kind === 'none') return to;
  const at = revisionBefore(lives.map((l) => l.revisions.map((r) => r.revision)), to.kind === 'live' ? { live: to.life } : { life: to.life, revision: to.record.revision });
  if (!at) return { kind: 'none' };
  const entry = lives[at.life - 1];
  return { kind: 'revision', life: at.life, entry, record: entry.revisions.find((r) => r.revision === at.revision)! };
}

function specOf(side: Side): AgentSpec | null {
  return side.kind === 'revision' ? side.record.spec : null;
}

function label(side: Side): string {
  if (side.kind === 'revision') return `life ${side.life} revision ${side.record.revision}`;
  return side.kind;
}

function view(side: Side, spec: AgentSpec | null, chart: ChartUsed | null): RevisionDiffSideDto {
  return {
    source: side.kind,
    life: side.kind === 'none' ? null : side.life,
    revision: side.kind === 'revision' ? side.record.revision : null,
    spec: spec as RevisionDiffSideDto['spec'],
    chart: chart ? chartIdentity(chart) : null,
  };
}
