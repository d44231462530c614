import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { basename } from 'node:path';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, AppError, type MusterPresetsLocation } from '@app/common';
import { ClusterState, KubeRest, ListWatch, type KubeObject } from '@app/kube';
import { BUILT_IN_PRESETS, checkMusterConfig, checkPresets, knownPresets, unknownPresets, type ConfiguredPreset, type PresetInfo, type UnknownPreset } from '@app/toolset';

/** How often the file MUSTER_PRESETS names is looked at (its modification time and size). */
export const PRESET_FILE_POLL_MS = 1_000;

/** What the source said last: the presets it holds now, and the errors of its last read when that was refused. */
export interface PresetSourceState {
  configured: boolean;
  /** MUSTER_PRESETS as configured (a file as its name only unless `paths`); null when unset. */
  location: string | null;
  /** Whether presets were read (and passed Muster's rules) at least once: only then are preset names checked. */
  loaded: boolean;
  /** When the presets held now were read. */
  loadedAt: string | null;
  /** The last read's errors, in Muster's words, when it was refused (the presets read before it are kept). */
  errors: string[];
  /** Why nothing is read now (the file or ConfigMap is missing, the cluster is not configured), or null. */
  problem: string | null;
}

import type { PresetsValidationDto, ToolsetPresetListDto, ValidateToolsetPresetsDto } from './presets.dto.js';

/** A ConfigMap's text under the key MUSTER_PRESETS names, or null when it has no such key. */
type ConfigText = { text: string | null };

/**
 * The installation's Muster presets, from where MUSTER_PRESETS says they live: Muster's config.yaml
 * as a file (looked at every second, so a replaced file or a ConfigMap volume's swap is seen), or
 * Muster's ConfigMap (a list+watch of that one object, fieldSelector metadata.name). Every read
 * is checked by Muster's own start-up rules; a read that fails them is logged with every error and
 * the presets read before it are kept, so a bad edit never takes the check away or stops the service.
 */
@Injectable()
export class PresetSource implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('MusterPresets');
  private readonly location: MusterPresetsLocation | undefined;
  private presets: ConfiguredPreset[] | undefined;
  private loadedAt: Date | undefined;
  private errors: string[] = [];
  private problem: string | undefined;
  private watch: ListWatch<ConfigText> | undefined;
  private watchedFile: string | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly cluster: ClusterState,
  ) {
    this.location = config.musterPresets;
    this.problem = this.location === undefined ? undefined : `${this.where()} has not been read yet`;
  }

  onApplicationBootstrap(): void {
    const location = this.location;
    if (location?.kind === 'file') this.watchFile(location.path);
    if (location?.kind === 'configmap') this.watchConfigMap(location);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.watchedFile !== undefined) unwatchFile(this.watchedFile);
    await this.watch?.stop();
  }

  state(options: { paths: boolean } = { paths: true }): PresetSourceState {
    const location = this.location;
    const shown = location === undefined ? null : location.kind === 'file' && !options.paths ? basename(location.path) : this.where();
    return {
      configured: location !== undefined,
      location: shown,
      loaded: this.presets !== undefined,
      loadedAt: this.loadedAt?.toISOString() ?? null,
      errors: [...this.errors],
      problem: this.problem ?? null,
    };
  }

  /** list_toolset_presets: where the presets come from and every preset a toolset may name. */
  list(options: { paths: boolean }): ToolsetPresetListDto {
    return { source: this.state(options), presets: this.known() };
  }

  /** validate_toolset_presets: a proposed block (or config.yaml text) by Muster's rules, every error at once; reads and changes nothing. */
  validate(input: ValidateToolsetPresetsDto): PresetsValidationDto {
    const given = (['toolsetPresets', 'config'] as const).filter((field) => input[field] !== undefined);
    if (given.length !== 1) {
      const message =
        given.length === 0
          ? 'send the presets to check: toolsetPresets (the block as an object) or config (the config.yaml text)'
          : 'send one of toolsetPresets and config, not both: they are two ways of giving the same block';
      throw AppError.invalid(given.length === 0 ? [{ path: 'toolsetPresets', message }] : [{ path: 'config', message }]);
    }
    const { errors, presets } = input.config !== undefined ? checkMusterConfig(input.config) : checkPresets(input.toolsetPresets);
    return { valid: errors.length === 0, errors, presets };
  }

  /** Muster's built-ins, then the configured presets (or, until presets are read, agent-platform's). */
  known(): PresetInfo[] {
    return knownPresets(this.presets);
  }

  /**
   * The presets a toolset names that the installation lacks (refusals, in Muster's words with a
   * near miss), or, when no presets are read, a warning per preset that is not built in: unchecked.
   */
  check(toolset: unknown, field = 'toolset'): { refusals: UnknownPreset[]; warnings: { path: string; message: string }[] } {
    if (!Array.isArray(toolset) || !toolset.every((item) => typeof item === 'string')) return { refusals: [], warnings: [] };
    if (this.presets !== undefined) return { refusals: unknownPresets(toolset, this.known().map((preset) => preset.name), field), warnings: [] };
    const why =
      this.location === undefined
        ? 'no preset source is configured (MUSTER_PRESETS)'
        : `the presets of ${this.state({ paths: false }).location} are not read (${this.problem ?? 'not yet'})`;
    const warnings = toolset.flatMap((selector, index) => {
      const name = selector.startsWith('preset:') ? selector.slice('preset:'.length) : undefined;
      if (name === undefined || (BUILT_IN_PRESETS as readonly string[]).includes(name)) return [];
      return [{
        path: `${field}[${index}]`,
        message: `toolset [${toolset.join(',')}]: preset "${name}" at index ${index} was not checked: ${why}; Muster refuses every call of this agent if its toolsetPresets lack it (list_toolset_presets lists the known ones)`,
      }];
    });
    return { refusals: [], warnings };
  }

  private where(): string {
    const location = this.location;
    if (location === undefined) return 'MUSTER_PRESETS';
    return location.kind === 'file' ? location.path : `configmap:${location.namespace}/${location.name}#${location.key}`;
  }

  /** Reads the file now, then whenever its modification time or size changes (a replacement or a symlink swap included). */
  private watchFile(path: string): void {
    this.readFile(path);
    this.watchedFile = path;
    watchFile(path, { interval: PRESET_FILE_POLL_MS, persistent: false }, (now: Stats, before: Stats) => {
      if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
      this.readFile(path);
    });
  }

  private readFile(path: string): void {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      this.unavailable(code === 'ENOENT' ? `${path} does not exist` : `${path} cannot be read (${code ?? String(error)})`);
      return;
    }
    this.read(text);
  }

  private watchConfigMap(location: Extract<MusterPresetsLocation, { kind: 'configmap' }>): void {
    if (!this.cluster.configuration().configured) {
      this.unavailable('no cluster is configured (KUBECONFIG) to read the ConfigMap from');
      return;
    }
    let rest: Promise<KubeRest> | undefined;
    const api = (): Promise<KubeRest> =>
      (rest ??= KubeRest.load(this.config.KUBECONFIG).catch((error: unknown) => {
        rest = undefined;
        throw error;
      }));
    this.watch = new ListWatch<ConfigText>(api, {
      collection: { apiPath: '/api/v1', plural: 'configmaps' },
      namespaces: [location.namespace],
      fieldSelector: `metadata.name=${location.name}`,
      transform: (object: KubeObject) => {
        const data = (object.data ?? {}) as Record<string, unknown>;
        return { text: typeof data[location.key] === 'string' ? (data[location.key] as string) : null };
      },
      onError: (message) => this.logger.warn(`reading ${this.where()}: ${message}`),
    });
    this.watch.onChange((change) => {
      if (change.type === 'delete') this.unavailable(`ConfigMap ${location.namespace}/${location.name} was deleted`);
      else if (change.value.text === null) this.unavailable(`ConfigMap ${location.namespace}/${location.name} has no key ${location.key}`);
      else this.read(change.value.text);
    });
    this.watch.start();
    void this.watch.whenSynced(60_000).then((synced) => {
      if (synced && this.watch?.get(location.namespace, location.name) === undefined) this.unavailable(`ConfigMap ${location.namespace}/${location.name} does not exist`);
    });
  }

  /** One read of the config text: taken when Muster would start with it, else logged with every error and the last good presets kept. */
  private read(text: string): void {
    const { errors, presets } = checkMusterConfig(text);
    if (errors.length > 0) {
      this.errors = errors;
      const kept = this.presets === undefined ? 'no presets were read before, so preset names stay unchecked' : `keeping the ${this.presets.length} presets read at ${this.loadedAt!.toISOString()}`;
      this.logger.error(`${this.where()} is refused by Muster's preset rules (${errors.length} error${errors.length === 1 ? '' : 's'}); ${kept}:\n  ${errors.join('\n  ')}`);
      return;
    }
    this.presets = presets;
    this.loadedAt = new Date();
    this.errors = [];
    this.problem = undefined;
    this.logger.log(`read ${presets.length} preset${presets.length === 1 ? '' : 's'} from ${this.where()}: ${presets.map((preset) => preset.name).join(', ') || '(only the built-ins)'}`);
  }

  private unavailable(problem: string): void {
    this.problem = problem;
    const kept = this.presets === undefined ? 'preset names stay unchecked' : `keeping the ${this.presets.length} presets read at ${this.loadedAt!.toISOString()}`;
    this.logger.warn(`${problem}; ${kept}`);
  }
}
