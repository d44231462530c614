import type { BlueprintRow, BlueprintVersionRow } from '@app/store';

export type BlueprintOwner = 'file' | 'operator';

/** A blueprint as the service works with it: the store's row, its active version's body as stored (maybe unreadable). */
export interface BlueprintRecord {
  id: string;
  name: string;
  activeVersion: number;
  latestVersion: number;
  owner: BlueprintOwner;
  seedDigest: string | null;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string;
  updatedBy: string;
  /** The active version's body exactly as stored: the rules decide whether it is one (blueprint.rules.ts). */
  body: unknown;
}

export interface BlueprintVersionRecord {
  version: number;
  body: unknown;
  note: string | null;
  rolledBackTo: number | null;
  createdAt: Date;
  createdBy: string;
}

/*
 * The one row mapper of the blueprint store: the body is a JSON column, the owner a string; these
 * functions are the only place that says what they hold.
 */

export function toBlueprintRecord(row: BlueprintRow, activeBody: unknown): BlueprintRecord {
  return {
    id: row.id,
    name: row.name,
    activeVersion: row.activeVersion,
    latestVersion: row.latestVersion,
    owner: row.owner === 'file' ? 'file' : 'operator',
    seedDigest: row.seedDigest,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    createdBy: row.createdBy,
    updatedBy: row.updatedBy,
    body: activeBody ?? null,
  };
}

export function toBlueprintVersionRecord(row: BlueprintVersionRow): BlueprintVersionRecord {
  return { version: row.version, body: row.body, note: row.note, rolledBackTo: row.rolledBackTo, createdAt: row.createdAt, createdBy: row.createdBy };
}
