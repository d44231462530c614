import { AppError } from '@app/common';

/** What REST carries in headers and MCP in arguments: the idempotency key and the expected version. */
export interface WriteHeaders {
  idempotencyKey?: string;
  expectedVersion?: number;
}

/**
 * A write command with the transport's headers folded in (REST's Idempotency-Key and If-Match);
 * a header and its argument twin (requestId, expectedVersion) must agree when both are sent.
 */
export function withWriteHeaders<T extends { requestId?: string; expectedVersion?: number }>(command: T, headers: WriteHeaders): T {
  if (headers.idempotencyKey !== undefined) {
    if (command.requestId !== undefined && command.requestId !== headers.idempotencyKey) {
      throw AppError.invalid([{ path: 'requestId', message: 'requestId and the Idempotency-Key header differ: send one of them' }]);
    }
    command.requestId = headers.idempotencyKey;
  }
  if (headers.expectedVersion !== undefined) {
    if (command.expectedVersion !== undefined && command.expectedVersion !== headers.expectedVersion) {
      throw AppError.invalid([{ path: 'expectedVersion', message: 'expectedVersion and the If-Match header differ: send one of them' }]);
    }
    command.expectedVersion = headers.expectedVersion;
  }
  return command;
}
