import { Injectable } from '@nestjs/common';
import { AppError } from '@app/common';
import type { ChangeEventDto, ChangeEventPageDto, ListEventsQueryDto } from './events.dto.js';
import { EventsRepository, type StoredEvent } from './events.repository.js';
import { toCloudEvent } from './webhook-dispatcher.js';

/** The outbox read by consumers catching up and by auditors (GET /api/v1/events). */
@Injectable()
export class ChangeEvents {
  constructor(private readonly events: EventsRepository) {}

  /** Oldest first from the cursor on: each event as CloudEvents structures it (the webhooks' event, in structured form). */
  async list(query: ListEventsQueryDto): Promise<ChangeEventPageDto> {
    const afterSeq = query.cursor === undefined ? undefined : decodeEventCursor(query.cursor);
    const items = await this.events.page({ afterSeq, type: query.type, subject: query.subject, limit: query.limit ?? 100 });
    const last = items[items.length - 1];
    return { items: items.map(eventView), nextCursor: last ? encodeEventCursor(last.seq) : null };
  }
}

function eventView(event: StoredEvent): ChangeEventDto {
  return toCloudEvent(event).toJSON() as unknown as ChangeEventDto;
}

export function encodeEventCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ s: seq })).toString('base64url');
}

function decodeEventCursor(cursor: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s?: unknown };
    if (Number.isSafeInteger(parsed.s) && (parsed.s as number) >= 0) return parsed.s as number;
  } catch {
    // fall through to the refusal
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it to read from the oldest event' }]);
}
