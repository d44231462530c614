import { AppError } from '@app/common';

/** What REST carries in headers and MCP in arguments: the idempotency key and the expected version. */
export interface WriteHeaders {
  idempotencyKey?: string;
  expectedVersion?: number;
}

/** What a write command carries of the write headers: the idempotency key and the expected version. */
export interface WriteCommand {
  requestId?: string;
  expectedVersion?: number;
}

/** The write headers as a REST request sent them (Idempotency-Key, If-Match), not yet parsed: data the door hands on. */
export interface RawWriteHeaders {
  idempotencyKey?: string;
  ifMatch?: string;
}

/**
 * The write command's idempotency key and expected version once the transport's write headers,
 * those of `takes` only, are folded in: the raw headers are parsed first, all of them (a
 * malformed one is refused whichever the write takes), then agreed with the arguments sent. It
 * sees those two arguments only, never the rest of the command. The one step OperationDoors runs
 * once the policy agreed.
 */
export function foldWriteHeaders(sent: WriteCommand, raw: RawWriteHeaders | undefined, takes: readonly (keyof WriteHeaders)[]): WriteCommand {
  const parsed = parseWriteHeaders(raw ?? {});
  return withWriteHeaders(sent, Object.fromEntries(takes.map((header) => [header, parsed[header]])));
}

/** The write headers: Idempotency-Key and If-Match (an ETag from this API: "<version>"). */
export function parseWriteHeaders({ idempotencyKey: key, ifMatch }: RawWriteHeaders): WriteHeaders {
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw AppError.invalid([{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID' }]);
  }
  let expectedVersion: number | undefined;
  if (ifMatch !== undefined && ifMatch.trim() !== '*') {
    const match = /^(W\/)?(?:"(\d{1,10})"|(\d{1,10}))$/.exec(ifMatch.trim());
    if (!match) throw AppError.invalid([{ path: 'If-Match', message: 'If-Match must be the ETag of the agent, e.g. "3" (see the ETag header of GET)' }]);
    // If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches. This API hands out strong ones only.
    if (match[1]) {
      throw new AppError('precondition_failed', `If-Match ${ifMatch.trim()} is a weak ETag, which never matches If-Match (a strong comparison): send the agent's ETag as GET gives it, e.g. "${match[2] ?? match[3]}"`, [
        { path: 'If-Match', message: 'a weak ETag never matches' },
      ]);
    }
    expectedVersion = Number(match[2] ?? match[3]);
  }
  return { idempotencyKey: key, expectedVersion };
}

/**
 * A write command's two header arguments with the transport's headers folded in (REST's
 * Idempotency-Key and If-Match); a header and its argument twin (requestId, expectedVersion) must
 * agree when both are sent.
 */
function withWriteHeaders({ requestId, expectedVersion }: WriteCommand, headers: WriteHeaders): WriteCommand {
  if (headers.idempotencyKey !== undefined && requestId !== undefined && requestId !== headers.idempotencyKey) {
    throw AppError.invalid([{ path: 'requestId', message: 'requestId and the Idempotency-Key header differ: send one of them' }]);
  }
  if (headers.expectedVersion !== undefined && expectedVersion !== undefined && expectedVersion !== headers.expectedVersion) {
    throw AppError.invalid([{ path: 'expectedVersion', message: 'expectedVersion and the If-Match header differ: send one of them' }]);
  }
  const key = headers.idempotencyKey ?? requestId;
  const version = headers.expectedVersion ?? expectedVersion;
  return { ...(key !== undefined && { requestId: key }), ...(version !== undefined && { expectedVersion: version }) };
}
