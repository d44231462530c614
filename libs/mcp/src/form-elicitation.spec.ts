import { describe, expect, it } from '@jest/globals';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { formElicitation } from './mcp-server.factory.js';

describe(formElicitation.name, () => {
  it.each<[ClientCapabilities, boolean, string]>([
    [{ elicitation: {} }, true, 'elicitation: {} (forms, as before 2025-11-25)'],
    [{ elicitation: { form: {} } }, true, 'form declared'],
    [{ elicitation: { form: {}, url: {} } }, true, 'form and url declared'],
    [{ elicitation: { url: {} } }, false, 'url only: no form to answer'],
    [{}, false, 'no elicitation'],
  ])('reads %j as %s (%s)', (capabilities, expected) => {
    expect(formElicitation(capabilities)).toBe(expected);
  });

  it('knows nothing when the server never saw initialize (a later HTTP request: the session remembers)', () => {
    expect(formElicitation(undefined)).toBeUndefined();
  });
});
