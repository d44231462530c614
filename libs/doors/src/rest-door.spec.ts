import { describe, expect, it } from '@jest/globals';
import { defineOperation, type OperationSet } from './operation.js';
import { bodyRoutes, restPath, routePattern } from './rest-door.js';

/** A descriptor with only what routing reads. */
const operation = (name: string, method: 'get' | 'post' | 'patch' | 'delete', path: string) =>
  defineOperation({ name, rest: { tag: 't', method, path, openapi: [] }, input: {}, service: Object, read: () => undefined, call: () => Promise.resolve(undefined) });

const SET: OperationSet = {
  toolsets: [],
  operations: [
    operation('get_thing', 'get', 'things/:name'),
    operation('rename_thing', 'post', 'things/:name/rename'),
    operation('update_thing', 'patch', 'things/:namespace/:name'),
    operation('delete_thing', 'delete', 'things/:namespace/:name'),
    operation('save_thing', 'post', 'things/:name'),
    operation('validate_thing', 'post', 'things/validate'),
  ],
};

describe('the routes with a body, from the descriptors', () => {
  const bodyOperationOf = bodyRoutes(SET);

  it.each([
    ['POST', '/api/v1/things/a/rename', 'rename_thing'],
    ['POST', '/api/v1/things/a/rename/', 'rename_thing'],
    ['PATCH', '/api/v1/things/team-a/a', 'update_thing'],
    ['POST', '/API/V1/Things/a/rename', 'rename_thing'],
    ['POST', '/api/v1/things/validate', 'validate_thing'],
    ['POST', '/api/v1/things/other', 'save_thing'],
  ])('%s %s is %s', (method, path, name) => {
    expect(bodyOperationOf(method, path)).toBe(name);
  });

  it.each([
    ['GET', '/api/v1/things/a'],
    ['DELETE', '/api/v1/things/team-a/a'],
    ['POST', '/api/v1/things/a/rename/more'],
    ['POST', '/api/v1/things//rename'],
    ['PATCH', '/api/v1/things/a'],
    ['POST', '/v1/things/a/rename'],
  ])('%s %s takes no body of a declared operation', (method, path) => {
    expect(bodyOperationOf(method, path)).toBeUndefined();
  });

  it('matches a route path as declared, its parameters one segment each', () => {
    expect(restPath(SET.operations[2])).toBe('/api/v1/things/:namespace/:name');
    expect(routePattern('/api/v1/a.b').test('/api/v1/aXb')).toBe(false);
  });
});
