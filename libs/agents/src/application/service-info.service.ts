import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Injectable, Optional } from '@nestjs/common';
import { AppConfig, PROJECT_PACKAGE } from '@app/common';
import { ChartSources, HelmClient } from '@app/helm';
import { McpRegistry } from '@app/mcp';
import { ClusterState, clusterReportWithoutPaths } from '@app/kube';
import { Store } from '@app/store';
import { knownPresets, MAX_INLINE_SELECTORS, MAX_SELECTOR_LENGTH, MAX_TOOLSET_HEADER_BYTES, SELECTOR_PATTERN } from '@app/toolset';
import { PresetSource } from '../presets/preset-source.js';
import type { InfoDto } from '../api/responses.dto.js';

/**
 * What every installation offers. `mcp` is the one that depends on the process: ServiceInfoService
 * answers it from the MCP registry (whether any domain tools are registered), in this position.
 */
export const CAPABILITIES = Object.freeze({ dryRun: true, validate: true, rollback: true, status: true, mcp: false, idempotentWrites: true, optimisticConcurrency: true, perAgentLock: true });

@Injectable()
export class ServiceInfoService {
  readonly version = PROJECT_PACKAGE.version ?? '0.0.0';

  constructor(
    private readonly config: AppConfig,
    private readonly helm: HelmClient,
    private readonly store: Store,
    private readonly cluster: ClusterState,
    private readonly mcp: McpRegistry,
    private readonly charts: ChartSources,
    /** The presets a toolset may name (list_toolset_presets answers them with descriptions). */
    @Optional() private readonly presets?: PresetSource,
  ) {}

  /**
   * What this installation offers, and the cluster it writes to (configured? reachable? why not).
   * File paths (the helm binary, a chart directory, the kubeconfig) and the API server's URL only with
   * `paths` (admins); others get their names, and the cluster's state in words.
   */
  async info(options: { paths: boolean } = { paths: true }): Promise<InfoDto> {
    // a relative path (charts/agent, ../x) is a path too; a URL (oci://…) is not one
    const shown = (path: string) => (options.paths || path.includes('://') ? path : basename(path));
    const [helm, cluster] = await Promise.all([this.helm.version().catch(() => null), this.cluster.report()]);
    return {
      service: 'agent-manager',
      version: this.version,
      chart: this.chartInfo(shown),
      helm: { version: helm?.version ?? null, major: helm?.major ?? null, binary: shown(this.helm.bin) },
      store: this.store.provider,
      cluster: options.paths ? cluster : clusterReportWithoutPaths(cluster),
      capabilities: { ...CAPABILITIES, mcp: this.mcp.toolNames().some((name) => !McpRegistry.ownTools.includes(name)) },
      toolsetLimits: {
        maxSelectors: MAX_INLINE_SELECTORS,
        maxSelectorLength: MAX_SELECTOR_LENGTH,
        maxToolsetHeaderBytes: MAX_TOOLSET_HEADER_BYTES,
        selectorPattern: SELECTOR_PATTERN.source,
        reservedPrefixes: ['toolset:'],
        presetOnlyPrefixes: ['label:'],
      },
      presets: (this.presets?.known() ?? knownPresets(undefined)).map(({ name, source }) => ({ name, source })),
    };
  }

  /** AGENT_CHART as configured, the chart writes use now, and why the bundled one stands in (while it does). */
  private chartInfo(shown: (path: string) => string): InfoDto['chart'] {
    const effect = this.charts.inEffect();
    return {
      ref: shown(this.config.AGENT_CHART),
      version: this.config.AGENT_CHART_VERSION ?? null,
      valuesSchemaDigest: schemaDigest(effect.dir),
      inEffect: { ref: shown(effect.ref), name: effect.name, version: effect.version },
      fallback: effect.fallback ? { reason: effect.fallback.reason, retryAfter: effect.fallback.retryAfter } : null,
    };
  }
}

function schemaDigest(chartDir: string | null): string | null {
  if (chartDir === null) return null;
  const file = join(chartDir, 'values.schema.json');
  return existsSync(file) ? `sha256:${createHash('sha256').update(readFileSync(file)).digest('hex')}` : null;
}

