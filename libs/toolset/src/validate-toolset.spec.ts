import { describe, expect, it } from '@jest/globals';
import { MAX_INLINE_SELECTORS, MAX_SELECTOR_LENGTH, MAX_TOOLSET_HEADER_BYTES, SHIPPED_PRESETS } from './toolset.rules.js';
import { validateToolset } from './validate-toolset.js';

const tools = (count: number): string[] => Array.from({ length: count }, (_, i) => `tool:t${i}`);
const heading = (list: unknown[]): string => `toolset ${JSON.stringify(list)}: `;

describe(validateToolset.name, () => {
  it.each<[string, unknown[]]>([
    ['one preset', ['preset:read-only']],
    ['the chat-only agent', ['preset:none']],
    ['every shipped preset', SHIPPED_PRESETS.map((preset) => `preset:${preset}`)],
    ['the four forms', ['preset:full', 'server:github', 'workflow:incident-triage', 'tool:core_workflow_list']],
    [`exactly ${MAX_INLINE_SELECTORS} selectors`, tools(MAX_INLINE_SELECTORS)],
    ['unicode names', ['tool:überwachung', 'server:日本', 'workflow:🚀']],
    ['duplicates', ['tool:x', 'tool:x', 'preset:read-only', 'preset:read-only']],
    ['a colon inside a name', ['tool:a:b']],
    ['an installation preset near a shipped name (names are exact)', ['preset:read_only', 'preset:Read-Only']],
  ])('accepts %s', (_, toolset) => {
    const sent = structuredClone(toolset);
    expect(validateToolset(toolset)).toEqual([]);
    expect(toolset).toEqual(sent);
  });

  it.each<[string, unknown, boolean | undefined, string[]]>([
    ['null when required', null, true, ['toolset']],
    ['undefined by default', undefined, undefined, ['toolset']],
    ['null when not required', null, false, []],
    ['undefined when not required', undefined, false, []],
  ])('treats %s', (_, value, required, paths) => {
    const violations = validateToolset(value, required === undefined ? {} : { required });
    expect(violations.map((v) => v.path)).toEqual(paths);
    violations.forEach((v) =>
      expect(v.message).toBe(
        'toolset is required: declare the tools this agent may use, e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent',
      ),
    );
  });

  it.each<[string, unknown, string]>([
    ['a string', 'preset:read-only', 'toolset "preset:read-only": must be a list of selectors, not a string; did you mean ["preset:read-only"]?'],
    [
      'a header-style string',
      'preset:read-only, workflow:incident-triage',
      'toolset "preset:read-only, workflow:incident-triage": must be a list of selectors, not a string; did you mean ["preset:read-only","workflow:incident-triage"]?',
    ],
    ['a number', 42, 'toolset 42: must be a list of selectors, not a number; e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent'],
    ['an object', { preset: 'read-only' }, 'toolset {"preset":"read-only"}: must be a list of selectors, not an object; e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent'],
  ])('refuses %s in place of a list', (_, value, message) => {
    expect(validateToolset(value)).toEqual([{ path: 'toolset', message }]);
  });

  it('refuses an empty list and points to preset:none', () => {
    expect(validateToolset([])).toEqual([
      {
        path: 'toolset',
        message:
          'toolset []: the list is empty; declare at least one selector, e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent ' +
          '(an empty list is refused so that "no tools" is never confused with implicit full access)',
      },
    ]);
  });

  it(`refuses ${MAX_INLINE_SELECTORS + 1} selectors at the ${MAX_INLINE_SELECTORS + 1}st, names the count and the cap, and reads no further`, () => {
    const toolset = [...tools(MAX_INLINE_SELECTORS - 1), 'tools:late', 'tools:later'];
    const violations = validateToolset(toolset);
    const listed = 'toolset ["tool:t0","tool:t1","tool:t2","tool:t3","tool:t4",…] (33 selectors): ';
    expect(violations).toEqual([
      {
        path: 'toolset[32]',
        index: 32,
        message:
          `${listed}33 selectors exceed the cap of 32 inline selectors (the selector at index 32 is one too many; those after it were not checked); ` +
          `define a preset in Muster's toolsetPresets for a larger selection and select it with "preset:<name>"`,
      },
      {
        path: 'toolset[31]',
        index: 31,
        selector: 'tools:late',
        message: `${listed}selector "tools:late" at index 31 has the plural prefix "tools:"; did you mean "tool:late"? Prefixes are singular`,
      },
    ]);
  });

  it('answers a list of 100,000 invalid items with the cap and the first 32 items only', () => {
    const toolset = Array.from({ length: 100_000 }, (_, i) => `bad ${i}`);
    const violations = validateToolset(toolset);
    expect(violations).toHaveLength(MAX_INLINE_SELECTORS + 1);
    expect(violations[0]?.message).toContain('100000 selectors exceed the cap of 32 inline selectors');
    expect(violations.every((v) => v.message.length < 1000)).toBe(true);
  });

  it(`refuses a selector longer than ${MAX_SELECTOR_LENGTH} characters, naming the cap`, () => {
    const selector = `tool:${'x'.repeat(MAX_SELECTOR_LENGTH - 4)}`;
    expect(validateToolset([`tool:${'x'.repeat(MAX_SELECTOR_LENGTH - 5)}`])).toEqual([]);
    const [violation] = validateToolset(['preset:read-only', selector]);
    expect(violation).toMatchObject({ path: 'toolset[1]', index: 1, selector });
    expect(violation?.message).toContain(`at index 1 has 257 characters, more than the ${MAX_SELECTOR_LENGTH} a selector may have;`);
  });

  it('counts characters, not UTF-16 units, against the selector cap', () => {
    expect(validateToolset([`tool:${'🚀'.repeat(MAX_SELECTOR_LENGTH - 5)}`])).toEqual([]);
    expect(validateToolset([`tool:${'🚀'.repeat(MAX_SELECTOR_LENGTH - 4)}`])[0]?.message).toContain('has 257 characters');
  });

  it(`refuses selectors whose joined header exceeds ${MAX_TOOLSET_HEADER_BYTES} bytes, naming the cap`, () => {
    const long = (i: number) => `tool:${String(i).padStart(3, '0')}${'x'.repeat(MAX_SELECTOR_LENGTH - 8)}`;
    const toolset = Array.from({ length: 16 }, (_, i) => long(i));
    expect(validateToolset(toolset.slice(0, 15))).toEqual([]);
    const violations = validateToolset(toolset);
    expect(violations).toHaveLength(1);
    expect(violations[0]?.path).toBe('toolset');
    expect(violations[0]?.message).toContain(`the selectors joined take 4111 bytes (UTF-8), more than the ${MAX_TOOLSET_HEADER_BYTES} bytes (4 KiB) of the X-Muster-Toolset header;`);
  });

  it.each<[string, string, string]>([
    ['a zero-width space', 'preset:read\u200b-only', 'contains the invisible character U+200B (control, zero-width or bidirectional), which makes it look like a name it is not; did you mean "preset:read-only"? Remove it and type the exact name'],
    ['a right-to-left override', 'tool:\u202egnp.exe', 'contains the invisible character U+202E (control, zero-width or bidirectional), which makes it look like a name it is not; did you mean "tool:gnp.exe"? Remove it and type the exact name'],
    ['a C1 control', 'tool:a\u0085b', 'contains the invisible character U+0085 (control, zero-width or bidirectional), which makes it look like a name it is not; did you mean "tool:ab"? Remove it and type the exact name'],
    ['a NUL', 'tool:a\u0000', 'contains the invisible character U+0000 (control, zero-width or bidirectional), which makes it look like a name it is not; did you mean "tool:a"? Remove it and type the exact name'],
    ['a word joiner and a bidi isolate', 'server:\u2060git\u2066hub', 'contains the invisible characters U+2060, U+2066 (control, zero-width or bidirectional), which make it look like a name it is not; did you mean "server:github"? Remove them and type the exact name'],
    ['a tag character (astral, Cf)', 'tool:a\u{E0041}', 'contains the invisible character U+E0041 (control, zero-width or bidirectional), which makes it look like a name it is not; did you mean "tool:a"? Remove it and type the exact name'],
  ])('refuses %s, naming the index, and shows it escaped', (_, selector, problem) => {
    const [violation, ...rest] = validateToolset(['preset:read-only', selector]);
    expect(rest).toEqual([]);
    expect(violation).toMatchObject({ path: 'toolset[1]', index: 1, selector });
    expect(violation?.message).toContain(`at index 1 ${problem}`);
    expect(violation?.message).not.toMatch(/[\u200b\u202e\u0085\u2060\u2066]/u);
  });

  it.each<[string, string]>([
    ['Preset:read-only', 'has the prefix "Preset:" in the wrong case; did you mean "preset:read-only"? Prefixes are lowercase'],
    ['TOOL:x', 'has the prefix "TOOL:" in the wrong case; did you mean "tool:x"? Prefixes are lowercase'],
    [' preset:read-only', 'contains whitespace; did you mean "preset:read-only"? Remove the whitespace; Muster names are exact'],
    ['preset:read-only ', 'contains whitespace; did you mean "preset:read-only"? Remove the whitespace; Muster names are exact'],
    ['preset: read-only', 'contains whitespace; did you mean "preset:read-only"? Remove the whitespace; Muster names are exact'],
    ['tool:my tool', 'contains whitespace inside it; Muster names are exact and never contain whitespace: use the exact name'],
    ['tool:a,b', 'holds 2 selectors; put one selector per list item: "tool:a", "tool:b"'],
    ['preset:read-only, workflow:triage', 'holds 2 selectors; put one selector per list item: "preset:read-only", "workflow:triage"'],
    ['tool:a,', 'contains a comma, which separates selectors; remove it: did you mean "tool:a"?'],
    ['tools:x', 'has the plural prefix "tools:"; did you mean "tool:x"? Prefixes are singular'],
    ['presets:full', 'has the plural prefix "presets:"; did you mean "preset:full"? Prefixes are singular'],
    ['servers:github', 'has the plural prefix "servers:"; did you mean "server:github"? Prefixes are singular'],
    ['workflows:triage', 'has the plural prefix "workflows:"; did you mean "workflow:triage"? Prefixes are singular'],
    ['Presets:Read_Only', 'has the plural prefix "Presets:"; did you mean "preset:read-only"? Prefixes are singular and lowercase; preset names are exact'],
    [' Preset:read_only', 'contains whitespace and has the prefix "Preset:" in the wrong case; did you mean "preset:read-only"? Prefixes are lowercase; preset names are exact; remove the whitespace; Muster names are exact'],
    ['server:', `names no server; write "server:<name>" with the server's exact name`],
    ['tool: ', `contains whitespace and names no tool; write "tool:<name>" with the tool's exact name; remove the whitespace; Muster names are exact`],
    ['toolset:x', `uses the reserved prefix "toolset:"; use preset:<name>, server:<name>, workflow:<name> or tool:<name>; to reuse a named selection, define a preset in Muster's toolsetPresets and select it with "preset:<name>"`],
    ['label:team=x', `uses "label:", which exists only inside presets; define a preset in Muster's toolsetPresets with the rule "label: team=x" and select it with "preset:<name>"`],
    ['mcp:github', 'has the unknown prefix "mcp:"; use preset:<name>, server:<name>, workflow:<name> or tool:<name>'],
    ['read-only', 'has no prefix; did you mean "preset:read-only"? A selector is preset:<name>, server:<name>, workflow:<name> or tool:<name>'],
    ['github', 'has no prefix; a selector is preset:<name>, server:<name>, workflow:<name> or tool:<name>'],
    ['', 'is empty; remove it: each item is one selector, such as "preset:read-only"'],
  ])('refuses %j: it %s', (selector, problem) => {
    const toolset = ['preset:read-only', selector];
    expect(validateToolset(toolset)).toEqual([
      { path: 'toolset[1]', index: 1, selector, message: `${heading(toolset)}selector ${JSON.stringify(selector)} at index 1 ${problem}` },
    ]);
  });

  it.each<[string, string]>([
    ['tool:a\u00a0', 'selector "tool:a\\u00a0" at index 0 contains whitespace (U+00A0); did you mean "tool:a"?'],
    ['tool:my\u3000tool', 'selector "tool:my\\u3000tool" at index 0 contains whitespace (U+3000) inside it;'],
    ['tool:a\ufeff', 'selector "tool:a\\ufeff" at index 0 contains whitespace (U+FEFF); did you mean "tool:a"?'],
  ])('refuses %j and shows the invisible whitespace escaped', (selector, problem) => {
    const [violation] = validateToolset([selector]);
    expect(violation?.message).toContain(problem);
    expect(violation?.selector).toBe(selector);
  });

  it.each<[string, unknown, string]>([
    ['a number', 42, 'item 42 at index 1 is a number, not a selector string'],
    ['null', null, 'item null at index 1 is null, not a selector string'],
    ['an object', { tool: 'x' }, 'item {"tool":"x"} at index 1 is an object, not a selector string'],
    ['a list', ['tool:x'], 'item ["tool:x"] at index 1 is a list, not a selector string'],
  ])('refuses %s as an element', (_, item, problem) => {
    const toolset = ['tool:a', item];
    expect(validateToolset(toolset)).toEqual([
      { path: 'toolset[1]', index: 1, message: `${heading(toolset)}${problem}; write each selector as a string, e.g. "preset:read-only"` },
    ]);
  });

  it('reports a hole in a sparse list', () => {
    const toolset: unknown[] = ['tool:a'];
    toolset[2] = 'tool:c';
    expect(validateToolset(toolset).map((v) => v.path)).toEqual(['toolset[1]']);
  });

  it('reports every violation at once, each with its index and selector', () => {
    const toolset = ['Preset:read-only', 'preset:none', 'tool:a,b', 7, 'server:', 'label:team=x', 'toolset:mine'];
    const violations = validateToolset(toolset);
    expect(violations.map(({ path, index, selector }) => ({ path, index, selector }))).toEqual([
      { path: 'toolset[0]', index: 0, selector: 'Preset:read-only' },
      { path: 'toolset[2]', index: 2, selector: 'tool:a,b' },
      { path: 'toolset[3]', index: 3, selector: undefined },
      { path: 'toolset[4]', index: 4, selector: 'server:' },
      { path: 'toolset[5]', index: 5, selector: 'label:team=x' },
      { path: 'toolset[6]', index: 6, selector: 'toolset:mine' },
    ]);
    violations.forEach((v) => {
      expect(v.message.startsWith(heading(toolset))).toBe(true);
      expect(v.message).toContain(`at index ${v.index}`);
    });
  });

  it('starts every path with the field it is given', () => {
    expect(validateToolset(['tool:x', 'tools:y'], { field: 'agent.toolset' }).map((v) => v.path)).toEqual(['agent.toolset[1]']);
    expect(validateToolset(null, { field: 'agent.toolset' }).map((v) => v.path)).toEqual(['agent.toolset']);
  });

  it('shortens a very long selector in the message but keeps it whole in the violation', () => {
    const selector = `tool:${'x'.repeat(500)} y`;
    const [violation] = validateToolset([selector]);
    expect(violation?.selector).toBe(selector);
    expect(violation?.message.length).toBeLessThan(500);
  });
});
