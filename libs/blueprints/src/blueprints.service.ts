import { Injectable } from '@nestjs/common';
import { AgentsRepository, AgentsService, fieldChanges, type AgentOrigin, type AgentRecord } from '@app/agents';
import { type CallerAccess, auditOf, readInput } from '@app/doors';
import { Authorizer } from '@app/auth';
import { AppError, append, type ErrorDetail } from '@app/common';
import { BLUEPRINT_NAME, bodyProblems, invalidBody, nameProblems, normalizeBody, upgradePatch, type BlueprintBody } from './blueprint.rules.js';
import { BlueprintCatalog } from './blueprint-catalog.service.js';
import type { BlueprintRecord } from './blueprints.records.js';
import { BlueprintsRepository, type BlueprintWriter, type Written } from './blueprints.repository.js';
import { decodeCursor, encodeCursor } from './blueprints.paging.js';
import {
  BLUEPRINT_PAGE,
  CreateBlueprintDto,
  type ListBlueprintsQueryDto,
  SaveBlueprintVersionDto,
  ValidateBlueprintDto,
  type BlueprintBodyDto,
  type BlueprintDiffQueryDto,
  type RenameBlueprintDto,
  type RollbackBlueprintDto,
  type UpgradeBlueprintAgentsDto,
} from './blueprints.dto.js';
import type {
  BlueprintDto,
  BlueprintListDto,
  BlueprintRefereesDto,
  BlueprintVersionDiffDto,
  BlueprintVersionListDto,
  DeleteBlueprintResultDto,
  UpgradedAgentDto,
  UpgradeResultDto,
  ValidateBlueprintResultDto,
} from './blueprints.responses.js';
import { blueprintView, bodyFields, summaryView, versionView } from './blueprints.views.js';

const bodyOf = (input: BlueprintBodyDto) => ({ description: input.description, fixed: input.fixed, open: input.open, defaults: input.defaults });

/**
 * Every blueprint operation, once, for both doors (authorized before by their descriptors in
 * blueprints.operations.ts): checked by the blueprint rules, written as immutable versions,
 * journaled, and served at once (BlueprintCatalog).
 */
@Injectable()
export class BlueprintsService {
  constructor(
    private readonly repository: BlueprintsRepository,
    private readonly catalog: BlueprintCatalog,
    private readonly agents: AgentsService,
    private readonly agentsRepository: AgentsRepository,
    private readonly authorizer: Authorizer,
  ) {}

  /** A page by name: one more row than asked is read to tell whether another page follows. */
  async list(query: ListBlueprintsQueryDto): Promise<BlueprintListDto> {
    const limit = query.limit ?? BLUEPRINT_PAGE;
    const records = await this.repository.page(query.cursor === undefined ? undefined : decodeCursor(query.cursor), limit + 1);
    const page = records.slice(0, limit);
    const reasons = this.catalog.conflicts(page);
    const items = page.map((record, i) => summaryView(record, reasons[i]));
    return { items, nextCursor: records.length > limit ? encodeCursor(items[limit - 1].name) : null };
  }

  async get(name: string, version?: number): Promise<BlueprintDto> {
    const record = await this.require(name);
    const read = await this.repository.version(record.id, version ?? record.activeVersion);
    if (!read) throw new AppError('not_found', `blueprint ${name} has no version ${version}: its versions are 1 to ${record.latestVersion} (list_blueprint_versions)`);
    return blueprintView(record, this.catalog.conflict(record), read);
  }

  async versions(name: string): Promise<BlueprintVersionListDto> {
    const record = await this.require(name);
    const versions = await this.repository.versions(record.id);
    return { name, activeVersion: record.activeVersion, items: versions.map((v) => versionView(v, record.activeVersion)) };
  }

  /**
   * What changed between two versions of a blueprint (`to`: the active one unless given; `from`: the
   * version before `to`): its body's fields, each fixed argument and default by its own path.
   */
  async diffVersions(name: string, query: BlueprintDiffQueryDto): Promise<BlueprintVersionDiffDto> {
    const record = await this.require(name);
    const to = query.to ?? record.activeVersion;
    const from = query.from ?? (to > 1 ? to - 1 : null);
    const read = async (version: number | null, field: 'from' | 'to') => {
      if (version === null) return null;
      const found = await this.repository.version(record.id, version);
      if (!found) {
        throw new AppError('not_found', `${field}: blueprint ${name} has no version ${version}: its versions are 1 to ${record.latestVersion} (list_blueprint_versions)`, [
          { path: field, message: `version ${version} does not exist (1 to ${record.latestVersion})` },
        ]);
      }
      return found;
    };
    const after = (await read(to, 'to'))!;
    const before = await read(from, 'from');
    const fields = fieldChanges(before && bodyFields(before.body), bodyFields(after.body));
    return { name, from, to, activeVersion: record.activeVersion, changed: fields.length > 0, fields };
  }

  /** Every problem of the request (its fields, the name, the body) in one 400. */
  async create(access: CallerAccess, raw: unknown): Promise<BlueprintDto> {
    const { value: input, violations, unreadable } = readInput(CreateBlueprintDto, raw);
    if (unreadable) throw AppError.invalid(violations);
    const nameRead = violations.some((v) => v.path === 'name');
    const problems = [...violations, ...(await this.createProblems(nameRead ? null : input.name, bodyOf(input)))];
    if (problems.length > 0) throw invalidBody(problems);
    if (input.dryRun === true) return firstVersionPreview(input, access.caller.actor);
    const record = await this.repository.create(input.name, { body: normalizeBody(bodyOf(input)), note: input.note, owner: 'operator' }, this.writer(access, 'create_blueprint'));
    return this.written(record);
  }

  async save(access: CallerAccess, name: string, raw: unknown): Promise<BlueprintDto> {
    const { value: input, violations, unreadable } = readInput(SaveBlueprintVersionDto, raw);
    if (unreadable) throw AppError.invalid(violations);
    const record = await this.requireHealthy(name, 'save a version of');
    // An expectedVersion that is no version ("1", 1.5) is the request's own mistake: the 400 below names it.
    const expected = violations.some((v) => v.path === 'expectedVersion') ? undefined : input.expectedVersion;
    if (expected !== undefined && expected !== record.latestVersion) {
      throw new AppError('conflict', `blueprint ${name} is at version ${record.latestVersion}, not ${expected}: read it again (get_blueprint) and save on top of it`, [
        { path: 'expectedVersion', message: `the latest version is ${record.latestVersion}` },
      ]);
    }
    const problems = [...violations, ...bodyProblems(bodyOf(input))];
    if (problems.length > 0) throw invalidBody(problems);
    const next = { body: normalizeBody(bodyOf(input)), note: input.note, owner: 'operator' as const };
    return this.written(await this.repository.append(record, next, this.writer(access, 'save_blueprint_version')));
  }

  async rollback(access: CallerAccess, name: string, input: RollbackBlueprintDto): Promise<BlueprintDto> {
    const record = await this.requireHealthy(name, 'roll back');
    const target = await this.repository.version(record.id, input.version);
    if (!target) throw new AppError('not_found', `blueprint ${name} has no version ${input.version}: its versions are 1 to ${record.latestVersion} (list_blueprint_versions)`);
    const problems = bodyProblems(target.body);
    if (problems.length > 0) {
      throw AppError.invalid(problems, `version ${input.version} of blueprint ${name} no longer passes the create checks: save a new version instead`);
    }
    const next = { body: normalizeBody(target.body as Record<string, unknown>), note: input.note, rolledBackTo: input.version, owner: 'operator' as const };
    return this.written(await this.repository.append(record, next, this.writer(access, 'rollback_blueprint')));
  }

  async rename(access: CallerAccess, name: string, input: RenameBlueprintDto): Promise<BlueprintDto> {
    const record = await this.requireHealthy(name, 'rename');
    if (input.newName === name) throw AppError.invalid([{ path: 'newName', message: `newName is the blueprint's name already: give another name` }]);
    const taken = nameProblems(input.newName, this.catalog.otherTools()).map((p) => ({ ...p, path: 'newName' }));
    if (taken.length > 0) throw AppError.invalid(taken);
    if (await this.repository.find(input.newName)) throw new AppError('conflict', `blueprint ${input.newName} already exists: choose another name`, [{ path: 'newName', message: 'a blueprint with this name exists' }]);
    await this.refuseHeld(access, record, 'rename');
    return this.written(await this.repository.rename(record, input.newName, this.writer(access, 'rename_blueprint')));
  }

  /** Delete-only for a conflicted blueprint too; refused while agents hold it. */
  async delete(access: CallerAccess, name: string): Promise<DeleteBlueprintResultDto> {
    const record = await this.require(name);
    await this.refuseHeld(access, record, 'delete');
    await this.repository.delete(record, this.writer(access, 'delete_blueprint'));
    await this.catalog.syncAfterWrite();
    return { name, deleted: true };
  }

  /** Exactly the pre-write checks of a create (a new name) or a save-version (an existing name); writes nothing. */
  async validate(raw: unknown): Promise<ValidateBlueprintResultDto> {
    const { value, violations, unreadable } = readInput(ValidateBlueprintDto, raw);
    if (unreadable) throw AppError.invalid(violations);
    const name = typeof value.name === 'string' ? value.name : '';
    const existing = BLUEPRINT_NAME.test(name) ? await this.repository.find(name) : null;
    const problems: ErrorDetail[] = violations.filter((v) => !['description', 'fixed', 'open', 'defaults', 'name'].includes(v.path));
    if (existing) {
      const reason = this.catalog.conflict(existing);
      if (reason) problems.push({ path: 'name', message: `blueprint ${name} is conflicted: only delete clears it` });
      append(problems, bodyProblems(bodyOf(value)));
      return { valid: problems.length === 0, checked: 'save', violations: problems };
    }
    append(problems, await this.createProblems(name, bodyOf(value)));
    return { valid: problems.length === 0, checked: 'create', violations: problems };
  }

  async referees(access: CallerAccess, name: string): Promise<BlueprintRefereesDto> {
    const record = await this.require(name);
    const { holders, counted } = await this.holders(access, record);
    return { name: record.name, holders, counted: counted.map(({ namespaces, count, summary }) => ({ namespaces, count, summary })) };
  }

  /**
   * Moves holders on older versions to the active one, each through update_agent (its own journal
   * entry and If-Match on the version read), continuing past failures; a dry run answers before/after.
   */
  async upgrade(access: CallerAccess, name: string, input: UpgradeBlueprintAgentsDto): Promise<UpgradeResultDto> {
    const record = await this.requireHealthy(name, 'upgrade the agents of');
    const target = normalizeBody(record.body as Record<string, unknown>);
    const wanted = input.agents ? new Set(input.agents) : undefined;
    const behind = (await this.agentsRepository.blueprintHolders(name)).filter((a) => a.origin && a.origin.version !== record.activeVersion);
    // Holders the caller may not read are never named (nor probed through `agents`): counted only.
    const holders = behind.filter((a) => access.isAllowed('get_agent', a.namespace));
    const chosen = holders.filter((a) => !wanted || wanted.has(`${a.namespace}/${a.name}`));
    const bodies = new Map<number, BlueprintBody | null>();
    const items: UpgradedAgentDto[] = [];
    for (const agent of chosen) {
      const from = agent.origin!.version;
      if (!bodies.has(from)) bodies.set(from, await this.readableBody(record.id, from));
      items.push(await this.upgradeOne(access, agent, upgradePatch(bodies.get(from) ?? null, target), { blueprint: name, version: record.activeVersion, blueprintId: record.id }, input.dryRun ?? false));
    }
    return { dryRun: input.dryRun ?? false, name, version: record.activeVersion, items, notShown: behind.length - holders.length };
  }

  private async upgradeOne(access: CallerAccess, agent: AgentRecord, patch: Record<string, unknown>, origin: AgentOrigin, dryRun: boolean): Promise<UpgradedAgentDto> {
    const ref = { namespace: agent.namespace, name: agent.name };
    const base = { ...ref, fromVersion: agent.origin!.version };
    try {
      await access.authorize('update_agent', ref);
      const result = await this.agents.update(access.caller, ref, { ...patch, expectedVersion: agent.version, dryRun }, origin);
      // Values that stay the same only move the agent to the version (the update journals that, without helm).
      if (!result.changed) return { ...base, outcome: 'unchanged' };
      if (result.change) return { ...base, outcome: 'pending-approval', before: result.before, after: result.after, change: result.change.id };
      return { ...base, outcome: dryRun ? 'would-update' : 'updated', before: result.before, after: result.after };
    } catch (error) {
      return { ...base, outcome: 'failed', error: (error as Error).message };
    }
  }

  private async readableBody(id: string, version: number): Promise<BlueprintBody | null> {
    const read = await this.repository.version(id, version);
    return read && bodyProblems(read.body).length === 0 ? normalizeBody(read.body as Record<string, unknown>) : null;
  }

  /** The create checks: the name (grammar, another tool's, another blueprint's) and the body. */
  private async createProblems(name: string | null, body: unknown): Promise<ErrorDetail[]> {
    if (name === null) return bodyProblems(body);
    const problems = nameProblems(name, this.catalog.otherTools());
    if (problems.length === 0 && (await this.repository.find(name))) {
      problems.push({ path: 'name', message: `blueprint ${name} already exists: save a new version of it (save_blueprint_version) or choose another name` });
    }
    return [...problems, ...bodyProblems(body)];
  }

  private async holders(access: CallerAccess, record: BlueprintRecord): Promise<Omit<BlueprintRefereesDto, 'counted'> & { counted: HiddenHolders[] }> {
    const all = await this.agentsRepository.blueprintHolders(record.name);
    const readable = all.filter((a) => access.isAllowed('get_agent', a.namespace));
    return {
      name: record.name,
      holders: readable.map((a) => ({ namespace: a.namespace, name: a.name, version: a.origin!.version })),
      counted: this.countHidden(all.filter((a) => !readable.includes(a))),
    };
  }

  /**
   * Holders the caller may not read, never named: counted per namespace pattern of the policy that
   * lets someone delete them (who can clear them), and by whom.
   */
  private countHidden(hidden: { namespace: string }[]): HiddenHolders[] {
    const groups = new Map<string, { count: number; who: string }>();
    for (const agent of hidden) {
      const grants = this.authorizer.grantedIn('delete_agent', agent.namespace);
      const patterns = [...new Set(grants.map((g) => g.pattern))].sort().join(', ') || '(no binding)';
      const names = [...new Set(grants.flatMap((g) => [...g.subjects.map((s) => (s === '*' ? 'every caller' : s)), ...g.groups.map((g) => `group ${g}`)]))].sort();
      const who = names.length > 0 ? names.join(', ') : 'nobody yet: an admin grants delete_agent there in AUTHZ_POLICY_FILE';
      const entry = groups.get(patterns) ?? { count: 0, who };
      entry.count += 1;
      groups.set(patterns, entry);
    }
    return [...groups].map(([namespaces, { count, who }]) => ({
      namespaces,
      count,
      who,
      summary: `${count} agent${count === 1 ? '' : 's'} you may not read; delete_agent there is granted to ${who}`,
    }));
  }

  /** 409 listing every holder (by name where the caller may read it, else counted) and who can clear them. */
  private async refuseHeld(access: CallerAccess, record: BlueprintRecord, action: 'rename' | 'delete'): Promise<void> {
    const { holders, counted } = await this.holders(access, record);
    if (holders.length === 0 && counted.length === 0) return;
    const hidden = counted.reduce((n, c) => n + c.count, 0);
    const named = holders.map((h) => `${h.namespace}/${h.name} (version ${h.version})`);
    const parts = [...named, ...counted.map((c) => `${c.count} agent${c.count === 1 ? '' : 's'} in namespaces (${c.namespaces}) you may not read`)];
    const clear =
      hidden === 0
        ? 'delete those agents first (delete_agent)'
        : named.length === 0
          ? `they can be cleared by ${clearers(counted)}`
          : `delete those agents first; the others can be cleared by ${clearers(counted)}`;
    throw new AppError(
      'conflict',
      `blueprint ${record.name} cannot be ${action === 'delete' ? 'deleted' : 'renamed'}: active agents created from it hold it: ${parts.join(', ')}; ${clear}`,
      [...holders.map((h) => ({ path: `${h.namespace}/${h.name}`, message: `holds version ${h.version}` })), ...counted.map((c) => ({ path: c.namespaces, message: c.summary }))],
    );
  }

  private async require(name: string): Promise<BlueprintRecord> {
    const record = BLUEPRINT_NAME.test(name) ? await this.repository.find(name) : null;
    if (!record) throw new AppError('not_found', `blueprint ${name} does not exist: list_blueprints (GET /api/v1/blueprints) shows what exists`);
    return record;
  }

  /** A conflicted blueprint is delete-only. */
  private async requireHealthy(name: string, action: string): Promise<BlueprintRecord> {
    const record = await this.require(name);
    const reason = this.catalog.conflict(record);
    if (reason) throw new AppError('conflict', `cannot ${action} blueprint ${name}: it is conflicted (${reason}); only delete clears it`);
    return record;
  }

  /** The answer to a committed write, from what the write stored: nothing after the commit may fail it. */
  private async written({ record, active }: Written): Promise<BlueprintDto> {
    await this.catalog.syncAfterWrite();
    return blueprintView(record, this.catalog.conflict(record), active);
  }

  private writer(access: CallerAccess, operation: string): BlueprintWriter {
    return { actor: access.caller.actor, audit: auditOf(access.caller, operation) };
  }
}

/** A create's dry run: the blueprint as version 1 would be stored now, by this actor; nothing is. */
function firstVersionPreview(input: CreateBlueprintDto, actor: string): BlueprintDto {
  const now = new Date();
  const body = normalizeBody(bodyOf(input));
  const record = { id: '', name: input.name, activeVersion: 1, latestVersion: 1, owner: 'operator' as const, seedDigest: null, createdAt: now, updatedAt: now, createdBy: actor, updatedBy: actor, body };
  return blueprintView(record, null, { version: 1, body, note: input.note ?? null, rolledBackTo: null, createdAt: now, createdBy: actor });
}

/** Holders the caller may not read, counted under the namespace patterns that let someone delete them. */
interface HiddenHolders {
  namespaces: string;
  count: number;
  /** Who may delete them there (subjects and groups of the policy). */
  who: string;
  summary: string;
}

function clearers(counted: HiddenHolders[]): string {
  return counted.map((c) => `in ${c.namespaces}: ${c.who}`).join('; ');
}
