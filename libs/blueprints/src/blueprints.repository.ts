import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { auditColumns, type AuditEntry } from '@app/agents';
import { AppError } from '@app/common';
import { Prisma, Store, type StoreClient } from '@app/store';
import type { BlueprintBody } from './blueprint.rules.js';
import { toBlueprintRecord, toBlueprintVersionRecord, type BlueprintOwner, type BlueprintRecord, type BlueprintVersionRecord } from './blueprints.records.js';

/** The generation key replicas poll: bumped in every blueprint write's transaction. */
const GENERATION = 'blueprints';

type Tx = Prisma.TransactionClient & Pick<StoreClient, 'blueprint' | 'blueprintVersion' | 'storeGeneration' | 'operation'>;

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

  async list(): Promise<BlueprintRecord[]> {
    // by code point on both providers (PostgreSQL's collation would order "_" by its own rules)
    const rows = (await this.db.blueprint.findMany()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (rows.length === 0) return [];
    const versions = await this.db.blueprintVersion.findMany({ where: { OR: rows.map((r) => ({ blueprintId: r.id, version: r.activeVersion })) } });
    const active = new Map(versions.map((v) => [v.blueprintId, v]));
    return rows.map((row) => toBlueprintRecord(row, active.get(row.id)));
  }

  async find(name: string): Promise<BlueprintRecord | null> {
    const row = await this.db.blueprint.findUnique({ where: { name } });
    if (!row) return null;
    const active = await this.db.blueprintVersion.findUnique({ where: { blueprintId_version: { blueprintId: row.id, version: row.activeVersion } } });
    return toBlueprintRecord(row, active ?? undefined);
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
  async create(name: string, first: NewVersion, by: BlueprintWriter): Promise<BlueprintRecord> {
    const id = randomUUID();
    try {
      return await this.db.$transaction(async (tx) => {
        const row = await tx.blueprint.create({
          data: { id, name, activeVersion: 1, latestVersion: 1, owner: first.owner, seedDigest: first.seedDigest ?? null, createdBy: by.actor, updatedBy: by.actor },
        });
        const version = await tx.blueprintVersion.create({ data: versionData(id, 1, first, by.actor) });
        await this.changed(tx, name, by, { version: 1, note: first.note });
        return toBlueprintRecord(row, version);
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw exists(name);
      throw error;
    }
  }

  /** Appends a version and makes it active, unless another write moved the blueprint since `current` was read. */
  async append(current: BlueprintRecord, next: NewVersion, by: BlueprintWriter): Promise<BlueprintRecord> {
    const version = current.latestVersion + 1;
    return this.db.$transaction(async (tx) => {
      const moved = await tx.blueprint.updateMany({
        where: { id: current.id, latestVersion: current.latestVersion, name: current.name },
        data: { activeVersion: version, latestVersion: version, owner: next.owner, seedDigest: next.seedDigest ?? null, updatedBy: by.actor },
      });
      if (moved.count !== 1) throw raced(current.name);
      const written = await tx.blueprintVersion.create({ data: versionData(current.id, version, next, by.actor) });
      await this.changed(tx, current.name, by, { version, note: next.note, rolledBackTo: next.rolledBackTo });
      const row = await tx.blueprint.findUniqueOrThrow({ where: { id: current.id } });
      return toBlueprintRecord(row, written);
    });
  }

  /** A new name for the blueprint and for every agent's reference to it, at once. */
  async rename(current: BlueprintRecord, to: string, by: BlueprintWriter): Promise<BlueprintRecord> {
    try {
      return await this.db.$transaction(async (tx) => {
        const moved = await tx.blueprint.updateMany({
          where: { id: current.id, name: current.name, latestVersion: current.latestVersion },
          data: { name: to, owner: 'operator', updatedBy: by.actor },
        });
        if (moved.count !== 1) throw raced(current.name);
        await tx.$executeRaw`UPDATE "Agent" SET "blueprintName" = ${to} WHERE "blueprintName" = ${current.name}`;
        await this.changed(tx, to, by, { renamedFrom: current.name });
        return { ...current, name: to, owner: 'operator' as const, updatedBy: by.actor };
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
      await this.changed(tx, current.name, by, { deleted: true });
    });
  }

  /** Bumps the generation and journals the write (a finished row of the audit trail). */
  private async changed(tx: Tx, name: string, by: BlueprintWriter, request: Record<string, unknown>): Promise<void> {
    await tx.storeGeneration.upsert({ where: { key: GENERATION }, create: { key: GENERATION, value: 1 }, update: { value: { increment: 1 } } });
    await tx.operation.create({
      data: {
        id: randomUUID(),
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
