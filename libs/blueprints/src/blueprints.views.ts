import type { BlueprintDto, BlueprintSummaryDto, BlueprintVersionDto } from './blueprints.responses.js';
import type { BlueprintRecord, BlueprintVersionRecord } from './blueprints.records.js';

type Plain = Record<string, unknown>;
const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A stored body's parts as far as they can be read (a malformed body reads as empty parts). */
function parts(body: unknown): { description: string | null; fixed: Plain; open: string[]; defaults: Plain } {
  const b = isPlain(body) ? body : {};
  return {
    description: typeof b.description === 'string' ? b.description : null,
    fixed: isPlain(b.fixed) ? b.fixed : {},
    open: Array.isArray(b.open) ? b.open.filter((x): x is string => typeof x === 'string') : [],
    defaults: isPlain(b.defaults) ? b.defaults : {},
  };
}

/**
 * A body as the fields a diff compares (fieldChanges): the description and the open list whole (none: absent), each
 * fixed argument and each default by its own path (`fixed.modelConfig`, `defaults.namespace`), so a
 * change names the argument that moved rather than the whole map.
 */
export function bodyFields(body: unknown): Plain {
  const { description, fixed, open, defaults } = parts(body);
  const fields: Plain = { description, ...(open.length > 0 && { open }) };
  for (const [key, value] of Object.entries(fixed)) fields[`fixed.${key}`] = value;
  for (const [key, value] of Object.entries(defaults)) fields[`defaults.${key}`] = value;
  return fields;
}

/** The list's view: no fixed value. */
export function summaryView(record: BlueprintRecord, conflictedReason: string | null): BlueprintSummaryDto {
  const { description, open } = parts(record.body);
  return {
    name: record.name,
    description,
    open,
    activeVersion: record.activeVersion,
    latestVersion: record.latestVersion,
    owner: record.owner,
    conflicted: conflictedReason !== null,
    conflictedReason,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    createdBy: record.createdBy,
    updatedBy: record.updatedBy,
  };
}

export function versionView(version: BlueprintVersionRecord, activeVersion: number): BlueprintVersionDto {
  return {
    version: version.version,
    active: version.version === activeVersion,
    ...parts(version.body),
    note: version.note,
    rolledBackTo: version.rolledBackTo,
    createdAt: version.createdAt.toISOString(),
    createdBy: version.createdBy,
  };
}

export function blueprintView(record: BlueprintRecord, conflictedReason: string | null, version: BlueprintVersionRecord): BlueprintDto {
  return { ...summaryView(record, conflictedReason), body: versionView(version, record.activeVersion) };
}
