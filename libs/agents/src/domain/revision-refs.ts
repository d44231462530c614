/** A revision as a diff names it: its life (1 for the first agent of a name, counting deleted ones) and its number in that life. */
export interface RevisionAt {
  life: number;
  revision: number;
}

/** `3` (revision 3 of `life`) or `1:3` (revision 3 of life 1), as the query's pattern admitted it. */
export function parseRevision(text: string, life: number): RevisionAt {
  const [a, b] = text.split(':');
  return b === undefined ? { life, revision: Number(a) } : { life: Number(a), revision: Number(b) };
}

/**
 * The revision before `to`, given each life's revision numbers (oldest life first): before a
 * revision, the one before it in its life; before a life's first, the last of the nearest earlier
 * life that has one; before live (`{ live: life }`: the current life, or null when no agent of the
 * name exists now), the last revision of that life (of the last life when null); null before the
 * very first (a diff from nothing: the whole create).
 */
export function revisionBefore(lives: number[][], to: RevisionAt | { live: number | null }): RevisionAt | null {
  const [startLife, below] = 'live' in to ? [to.live ?? lives.length, Infinity] : [to.life, to.revision];
  for (let life = startLife; life >= 1; life--) {
    const earlier = (lives[life - 1] ?? []).filter((revision) => life < startLife || revision < below);
    if (earlier.length > 0) return { life, revision: earlier[earlier.length - 1] };
  }
  return null;
}
