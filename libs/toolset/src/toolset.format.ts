/** How refusals name a toolset and its items: JSON-quoted, shortened when long, never rewritten. */

const LISTED_IN_FULL = 8;
const LISTED_WHEN_LONG = 5;
const ITEM_CHARS_IN_LIST = 48;
const OFFENDER_CHARS = 200;

function truncate(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  let cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) {
    cut = cut.slice(0, -1);
  }
  return `${cut}…`;
}

function describeNonString(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'bigint':
      return `${value}n`;
    case 'symbol':
    case 'function':
      return typeof value;
    default:
      try {
        return JSON.stringify(value);
      } catch {
        return Object.prototype.toString.call(value);
      }
  }
}

// JSON.stringify escapes C0 controls but leaves other whitespace (U+00A0, U+3000, …) and the other
// invisible characters (C1 controls, zero-width and bidirectional marks) as they are: unseen.
const escapeWhitespace = (quoted: string): string =>
  quoted.replace(/[^\S ]|[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (character) =>
    [...Array(character.length).keys()].map((unit) => `\\u${character.charCodeAt(unit).toString(16).padStart(4, '0')}`).join(''),
  );

/** One value as a message shows it: strings double-quoted and JSON-escaped, so stray whitespace shows. */
export function describeValue(value: unknown, max = OFFENDER_CHARS): string {
  return typeof value === 'string'
    ? escapeWhitespace(JSON.stringify(truncate(value, max)))
    : truncate(describeNonString(value), max);
}

/** `["preset:read-only","tool:x"]`, or the first few items and the count for a long list. */
export function describeToolset(list: readonly unknown[]): string {
  const items: string[] = [];
  const shown = list.length <= LISTED_IN_FULL ? list.length : LISTED_WHEN_LONG;
  for (let index = 0; index < shown; index += 1) {
    items.push(describeValue(list[index], ITEM_CHARS_IN_LIST));
  }
  return list.length <= LISTED_IN_FULL
    ? `[${items.join(',')}]`
    : `[${items.join(',')},…] (${list.length} selectors)`;
}

export function quoteAll(selectors: readonly string[]): string {
  return selectors.map((selector) => describeValue(selector)).join(', ');
}
