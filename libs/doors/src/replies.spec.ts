import { describe, expect, it } from '@jest/globals';
import { replies } from './replies.js';

const change = { location: '/api/v1/changes/ch-1' };

describe('the REST replies the routes share, as data', () => {
  it('an agent read carries its version as the ETag, and nothing without an agent', () => {
    expect(replies.agent({ version: 3 })).toEqual({ etag: 3 });
    expect(replies.agent(null).etag).toBeUndefined();
  });

  it('a create: 201 with the ETag, 200 for a dry run, a proposal 202 with Location and no ETag', () => {
    expect(replies.created({ agent: { version: 1 } })).toEqual({ status: 201, etag: 1 });
    expect(replies.created({ dryRun: true, agent: null })).toEqual({ status: 200, etag: undefined });
    expect(replies.created({ change, agent: null })).toEqual({ status: 202, location: change.location });
  });

  it('an update or rollback keeps the route status with the new ETag; a proposal is 202 with Location', () => {
    expect(replies.written({ agent: { version: 4 } })).toEqual({ etag: 4 });
    expect(replies.written({ change })).toEqual({ status: 202, location: change.location });
  });

  it('a delete sends no ETag; a proposal is 202 with Location', () => {
    expect(replies.removed({ agent: { version: 4 } })).toEqual({});
    expect(replies.removed({ change })).toEqual({ status: 202, location: change.location });
  });
});
