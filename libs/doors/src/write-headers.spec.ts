import { describe, expect, it } from '@jest/globals';
import { AppError } from '@app/common';
import { foldWriteHeaders, parseWriteHeaders } from './write-headers.js';

/** The refusal `run` throws, as a caller reads it. */
function refusal(run: () => unknown): { code: string; details: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('not refused');
}

describe('the write headers as REST sends them', () => {
  it('reads an Idempotency-Key and a strong If-Match, quoted or not; * expects nothing', () => {
    expect(parseWriteHeaders({ idempotencyKey: 'k-1', ifMatch: ' "3" ' })).toEqual({ idempotencyKey: 'k-1', expectedVersion: 3 });
    expect(parseWriteHeaders({ ifMatch: '7' }).expectedVersion).toBe(7);
    expect(parseWriteHeaders({ ifMatch: '*' }).expectedVersion).toBeUndefined();
  });

  it('refuses a malformed key or If-Match by header name, and a weak ETag as a failed precondition', () => {
    expect(refusal(() => parseWriteHeaders({ idempotencyKey: 'a b' }))).toEqual({
      code: 'invalid_request',
      details: [{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID' }],
    });
    expect(refusal(() => parseWriteHeaders({ ifMatch: 'v3' })).details).toEqual([
      { path: 'If-Match', message: 'If-Match must be the ETag of the agent, e.g. "3" (see the ETag header of GET)' },
    ]);
    expect(refusal(() => parseWriteHeaders({ ifMatch: 'W/"3"' })).code).toBe('precondition_failed');
  });

  it('folds only the headers a write takes, yet refuses a malformed one it does not take', () => {
    expect(foldWriteHeaders({}, { idempotencyKey: 'k-1', ifMatch: '"3"' }, ['idempotencyKey'])).toEqual({ requestId: 'k-1' });
    expect(foldWriteHeaders({}, { idempotencyKey: 'k-1', ifMatch: '"3"' }, ['idempotencyKey', 'expectedVersion'])).toEqual({ requestId: 'k-1', expectedVersion: 3 });
    expect(foldWriteHeaders({ requestId: 'own' }, undefined, ['idempotencyKey'])).toEqual({ requestId: 'own' });
    expect(refusal(() => foldWriteHeaders({}, { ifMatch: 'bad' }, ['idempotencyKey'])).details).toEqual([
      { path: 'If-Match', message: 'If-Match must be the ETag of the agent, e.g. "3" (see the ETag header of GET)' },
    ]);
  });

  it('refuses a header and its argument twin that differ', () => {
    expect(refusal(() => foldWriteHeaders({ requestId: 'a' }, { idempotencyKey: 'b' }, ['idempotencyKey'])).details).toEqual([
      { path: 'requestId', message: 'requestId and the Idempotency-Key header differ: send one of them' },
    ]);
  });
});
