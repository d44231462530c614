import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Injectable, Logger } from '@nestjs/common';
import { parse } from 'yaml';
import { canonicalJson } from '@app/agents';
import { auditOf } from '@app/doors';
import { AppConfig, AppError, append, ConfigError, OperationContexts } from '@app/common';
import { bodyProblems, nameProblems, normalizeBody, type BlueprintBody } from './blueprint.rules.js';
import { BlueprintCatalog } from './blueprint-catalog.service.js';
import { BlueprintsRepository, type BlueprintWriter } from './blueprints.repository.js';

/** Who the journal names for a seeded write. */
const SEEDER = 'blueprints-file';

export interface SeededBlueprint {
  name: string;
  body: BlueprintBody;
  digest: string;
}

type Plain = Record<string, unknown>;
const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The blueprints of a BLUEPRINTS_FILE text (`blueprints: [{name, description, fixed, open, defaults}]`),
 * each checked as a create is; any problem stops the start, naming the entry.
 */
export function parseBlueprintsFile(text: string, source: string, otherTools: Iterable<string>): SeededBlueprint[] {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new ConfigError(`BLUEPRINTS_FILE ${source} is not YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const list = isPlain(document) ? document.blueprints : undefined;
  if (!Array.isArray(list)) throw new ConfigError(`BLUEPRINTS_FILE ${source}: must be a mapping with a list "blueprints" of {name, description, fixed, open, defaults}`);
  const problems: string[] = [];
  const seeded: SeededBlueprint[] = [];
  const others = [...otherTools];
  list.forEach((entry, i) => {
    const { name, ...body } = isPlain(entry) ? entry : { name: undefined };
    const found = [...nameProblems(name, others), ...bodyProblems(body)];
    if (seeded.some((s) => s.name === name)) found.push({ path: 'name', message: `${String(name)} is declared twice` });
    if (found.length > 0) {
      append(problems, found.map((p) => `blueprints[${i}]${typeof name === 'string' ? ` (${name})` : ''}: ${p.path ? `${p.path}: ` : ''}${p.message}`));
      return;
    }
    const normalized = normalizeBody(body);
    seeded.push({ name: name as string, body: normalized, digest: createHash('sha256').update(canonicalJson(normalized)).digest('hex') });
  });
  if (problems.length > 0) throw new ConfigError(`BLUEPRINTS_FILE ${source} is not usable:\n  ${problems.join('\n  ')}`);
  return seeded;
}

/**
 * Seeds BLUEPRINTS_FILE at start: a blueprint is created when absent and upgraded in place while
 * it is still file-owned and the file's definition changed; the first operator edit makes it
 * operator-owned and the file never overwrites it again.
 */
@Injectable()
export class BlueprintSeeder {
  private readonly logger = new Logger('Blueprints');

  constructor(
    private readonly config: AppConfig,
    private readonly repository: BlueprintsRepository,
    private readonly catalog: BlueprintCatalog,
  ) {}

  async seed(): Promise<void> {
    const file = this.config.BLUEPRINTS_FILE;
    if (!file) return;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`BLUEPRINTS_FILE ${file} cannot be read: ${(error as Error).message}`);
    }
    const seeded = parseBlueprintsFile(text, file, this.catalog.otherTools());
    await OperationContexts.run({ door: 'internal', actor: SEEDER }, async () => {
      for (const blueprint of seeded) await this.seedOne(blueprint);
    });
  }

  private async seedOne({ name, body, digest }: SeededBlueprint): Promise<void> {
    const writer: BlueprintWriter = { actor: SEEDER, audit: auditOf(OperationContexts.current(), 'create_blueprint') };
    try {
      const record = await this.repository.find(name);
      if (!record) {
        await this.repository.create(name, { body, owner: 'file', seedDigest: digest, note: 'seeded from BLUEPRINTS_FILE' }, writer);
        this.logger.log(`blueprint ${name} created from BLUEPRINTS_FILE`);
      } else if (record.owner === 'file' && record.seedDigest !== digest) {
        await this.repository.append(record, { body, owner: 'file', seedDigest: digest, note: 'upgraded from BLUEPRINTS_FILE' }, { ...writer, audit: { ...writer.audit, operation: 'save_blueprint_version' } });
        this.logger.log(`blueprint ${name} upgraded from BLUEPRINTS_FILE (version ${record.latestVersion + 1})`);
      } else if (record.owner === 'operator' && record.seedDigest !== digest) {
        this.logger.log(`blueprint ${name} is operator-owned: BLUEPRINTS_FILE leaves it as it is`);
      }
    } catch (error) {
      // Another replica seeding at the same moment wrote it first: its write stands.
      if (!(error instanceof AppError && error.code === 'conflict')) throw error;
    }
  }
}
