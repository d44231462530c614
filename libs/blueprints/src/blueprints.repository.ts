import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { auditColumns, type AuditEntry } from '@app/doors';
import { AppError } from '@app/common';
import { appendEvent, fieldChanges } from '@app/agents';
import { Prisma, Store, type BlueprintRow, type StoreClient } from '@app/store';
import type { BlueprintBody } from './blueprint.rules.js';
import { toBlueprintRecord, toBlueprintVersionRecord, type BlueprintOwner, type BlueprintRecord, type BlueprintVersionRecord } from './blueprints.records.js';

/** The generation key replicas poll: bumped in every blueprint write's transaction. */
const GENERATION = 'blueprints';

type Tx = Prisma.TransactionClient & Pick<StoreClient, 'blueprint' | 'blueprintVersion' | 'storeGeneration' | 'operation' | 'changeEvent'>;

const json = (value: unknown) => value as Prisma.InputJsonValue;

/** Who writes, for the version row, the blueprint row and the journal. */
export interface BlueprintWriter {
  actor: string;
  audit: AuditEntry;
}

export interface NewVersion {
  body: BlueprintBody;
  note?: string;
  rolledBackTo?: number;
  /** The blueprint's owner after the write (an operator's write makes it operator-owned). */
  owner: BlueprintOwner;
  seedDigest?: string | null;
}

/** What a write stored: the blueprint and its active version. */
export interface Written {
  record: BlueprintRecord;
  active: BlueprintVersionRecord;
}

/** Blueprints and their immutable versions in the configured store; every write is journaled and bumps the generation. */
@Injectable()
export class BlueprintsRepository {
  constructor(private readonly store: Store) {}

  private get db(): StoreClient {
    return this.store.client;
  }

  /** The blueprints' generation: changes with every blueprint write on any replica. */
  async generation(): Promise<number> {
    const row = await this.db.storeGeneration.findUnique({ where: { key: GENERATION } });
    return row?.value ?? 0;
  }

  /**
   * A page of blueprints by name (code point order on both providers), after `after`: one query
   * whose parameters are the same few whatever the number of blueprints.
   */
  async page(after: string | undefined, limit: number): Promise<BlueprintRecord[]> {
    const rows = await this.db.blueprint.findMany({ where: { name: { gt: after ?? '' } }, orderBy: { name: 'asc' }, take: limit });
    return this.records(rows);
  }

  /** A page of the blueprints written after store generation `since` (all of them for -1), by id after `afterId`. */
  async writtenSince(since: number, afterId: string, limit: number): Promise<BlueprintRecord[]> {
    const rows = await this.db.blueprint.findMany({ where: { generation: { gt: since }, id: { gt: afterId } }, orderBy: { id: 'asc' }, take: limit });
    return this.records(rows);
  }

  /** A page of the blueprints' ids after `afterId`. */
  async ids(afterId: string, limit: number): Promise<string[]> {
    const rows = await this.db.blueprint.findMany({ where: { id: { gt: afterId } }, orderBy: { id: 'asc' }, take: limit, select: { id: true } });
    return rows.map((row) => row.id);
  }

  async count(): Promise<number> {
    return this.db.blueprint.count();
  }

  async find(name: string): Promise<BlueprintRecord | null> {
    const row = await this.db.blueprint.findUnique({ where: { name } });
    return row ? (await this.records([row]))[0] : null;
  }

  /** Rows with their active bodies; a row written before the activeBody column reads its version row. */
  private async records(rows: BlueprintRow[]): Promise<BlueprintRecord[]> {
    const records: BlueprintRecord[] = [];
    for (const row of rows) {
      if (row.activeBody !== null) {
        records.push(toBlueprintRecord(row, row.activeBody));
        continue;
      }
      const active = await this.db.blueprintVersion.findUnique({ where: { blueprintId_version: { blueprintId: row.id, version: row.activeVersion } } });
      records.push(toBlueprintRecord(row, active?.body ?? null));
    }
    return records;
  }

  async versions(id: string): Promise<BlueprintVersionRecord[]> {
    const rows = await this.db.blueprintVersion.findMany({ where: { blueprintId: id }, orderBy: { version: 'asc' } });
    return rows.map(toBlueprintVersionRecord);
  }

  async version(id: string, version: number): Promise<BlueprintVersionRecord | null> {
    const row = await this.db.blueprintVersion.findUnique({ where: { blueprintId_version: { blueprintId: id, version } } });
    return row ? toBlueprintVersionRecord(row) : null;
  }

  /** Version 1, active; refused with conflict when the name is taken (by another replica meanwhile too). */
  async create(name: string, first: NewVersion, by: BlueprintWriter): Promise<Written> {
    const id = randomUUID();
    try {
      return await this.db.$transaction(async (tx) => {
        const { generation, operationId } = await this.changed(tx, name, by, { version: 1, note: first.note });
        const row = await tx.blueprint.create({
          data: {
            id,
            name,
            activeVersion: 1,
            latestVersion: 1,
            activeBody: json(first.body),
            generation,
            owner: first.owner,
            seedDigest: first.seedDigest ?? null,
            createdBy: by.actor,
            updatedBy: by.actor,
          },
        });
        const version = await tx.blueprintVersion.create({ data: versionData(id, 1, first, by.actor) });
        await appendEvent(tx, blueprintEvent('created', name, operationId, by, { version: 1, note: first.note, changes: fieldChanges(null, first.body) }));
        return { record: toBlueprintRecord(row, version.body), active: toBlueprintVersionRecord(version) };
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw exists(name);
      throw error;
    }
  }

  /** Appends a version and makes it active, unless another write moved the blueprint since `current` was read. */
  async append(current: BlueprintRecord, next: NewVersion, by: BlueprintWriter): Promise<Written> {
    const version = current.latestVersion + 1;
    return this.db.$transaction(async (tx) => {
      const { generation, operationId } = await this.changed(tx, current.name, by, { version, note: next.note, rolledBackTo: next.rolledBackTo });
      const moved = await tx.blueprint.updateMany({
        where: { id: current.id, latestVersion: current.latestVersion, name: current.name },
        data: { activeVersion: version, latestVersion: version, activeBody: json(next.body), generation, owner: next.owner, seedDigest: next.seedDigest ?? null, updatedBy: by.actor },
      });
      if (moved.count !== 1) throw raced(current.name);
      const written = await tx.blueprintVersion.create({ data: versionData(current.id, version, next, by.actor) });
      const row = await tx.blueprint.findUniqueOrThrow({ where: { id: current.id } });
      const changes = fieldChanges(current.body as object | null, next.body);
      await appendEvent(tx, blueprintEvent(next.rolledBackTo !== undefined ? 'rolled_back' : 'updated', current.name, operationId, by, { version, note: next.note, rolledBackTo: next.rolledBackTo, changes }));
      return { record: toBlueprintRecord(row, written.body), active: toBlueprintVersionRecord(written) };
    });
  }

  /** A new name for the blueprint and for every agent's reference to it, at once. */
  async rename(current: BlueprintRecord, to: string, by: BlueprintWriter): Promise<Written> {
    try {
      return await this.db.$transaction(async (tx) => {
        const { generation, operationId } = await this.changed(tx, to, by, { renamedFrom: current.name });
        const moved = await tx.blueprint.updateMany({
          where: { id: current.id, name: current.name, latestVersion: current.latestVersion },
          data: { name: to, owner: 'operator', generation, updatedBy: by.actor },
        });
        if (moved.count !== 1) throw raced(current.name);
        await tx.$executeRaw`UPDATE "Agent" SET "blueprintName" = ${to} WHERE "blueprintName" = ${current.name}`;
        const active = await tx.blueprintVersion.findUniqueOrThrow({ where: { blueprintId_version: { blueprintId: current.id, version: current.activeVersion } } });
        await appendEvent(tx, blueprintEvent('renamed', to, operationId, by, { version: current.activeVersion, renamedFrom: current.name }));
        return { record: { ...current, name: to, owner: 'operator' as const, updatedBy: by.actor }, active: toBlueprintVersionRecord(active) };
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw exists(to);
      throw error;
    }
  }

  async delete(current: BlueprintRecord, by: BlueprintWriter): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const removed = await tx.blueprint.deleteMany({ where: { id: current.id, name: current.name } });
      if (removed.count !== 1) throw raced(current.name);
      const { operationId } = await this.changed(tx, current.name, by, { deleted: true });
      await appendEvent(tx, blueprintEvent('deleted', current.name, operationId, by, { version: current.activeVersion }));
    });
  }

  /**
   * Bumps the generation and journals the write (a finished row of the audit trail); answers the
   * new generation, for the written row. The bump locks the generation's row until commit, so
   * generations are given out in commit order: a replica that saw generation g has every row up to g.
   */
  private async changed(tx: Tx, name: string, by: BlueprintWriter, request: Record<string, unknown>): Promise<{ generation: number; operationId: string }> {
    const { value } = await tx.storeGeneration.upsert({ where: { key: GENERATION }, create: { key: GENERATION, value: 1 }, update: { value: { increment: 1 } } });
    const operationId = randomUUID();
    await tx.operation.create({
      data: {
        id: operationId,
        kind: 'blueprint',
        namespace: '*',
        name,
        state: 'succeeded',
        request: json(request),
        actor: by.actor,
        finishedAt: new Date(),
        ...auditColumns(by.audit),
      },
    });
    return { generation: value, operationId };
  }
}

function versionData(blueprintId: string, version: number, next: NewVersion, actor: string) {
  return { id: randomUUID(), blueprintId, version, body: json(next.body), note: next.note ?? null, rolledBackTo: next.rolledBackTo ?? null, createdBy: actor };
}

function exists(name: string): AppError {
  return new AppError('conflict', `blueprint ${name} already exists: save a new version of it (save_blueprint_version) or choose another name`, [
    { path: 'name', message: 'a blueprint with this name exists' },
  ]);
}

function raced(name: string): AppError {
  return new AppError('conflict', `blueprint ${name} was changed by another write meanwhile: read it again (get_blueprint) and retry`);
}

/** A blueprint write's change event (docs/contract.md §14): subject the blueprint's name (after a rename, the new one). */
function blueprintEvent(kind: 'created' | 'updated' | 'rolled_back' | 'renamed' | 'deleted', name: string, operationId: string, by: BlueprintWriter, data: Record<string, unknown>) {
  return { type: `blueprint.${kind}`, subject: name, data: { operationId, operation: 'blueprint', actor: by.actor, ...data } };
}
