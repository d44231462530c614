#!/usr/bin/env node
// Checks that the documentation holds together (npm run docs:check, run by CI):
//   1. every relative link in README.md and docs/**/*.md names a file or folder that exists,
//      and a #anchor names a heading of the linked Markdown file (GitHub's heading ids);
//   2. every section of the product contract the code cites (`docs/contract.md §n`) is a
//      heading of docs/contract.md, and no code cites a document outside the repository
//      (`SPEC §n`, the contract's old home);
//   3. every `docs/….md` a source file names exists.
// Prints one line per problem (file:line) and exits 1 when there is any.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONTRACT = 'docs/contract.md';
const problems = [];

/** The Markdown files whose links are checked: README.md and everything under docs/. */
function markdownFiles() {
  const files = ['README.md'];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk('docs');
  return files;
}

/** A file's lines outside fenced code blocks, with inline code spans blanked (links there are examples). */
function proseLines(text) {
  let fence = null;
  return text.split('\n').map((line) => {
    const opens = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (opens && opens[1][0] === fence[0] && opens[1].length >= fence.length) fence = null;
      return '';
    }
    if (opens) {
      fence = opens[1];
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
  });
}

/** GitHub's id of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function headingIds(text) {
  const ids = new Set();
  const seen = new Map();
  let fence = null;
  for (const line of text.split('\n')) {
    const opens = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (opens && opens[1][0] === fence[0] && opens[1].length >= fence.length) fence = null;
      continue;
    }
    if (opens) {
      fence = opens[1];
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const plain = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

const idsOf = new Map();
function anchorsOf(file) {
  if (!idsOf.has(file)) idsOf.set(file, headingIds(readFileSync(file, 'utf8')));
  return idsOf.get(file);
}

function checkLinks(file) {
  const lines = proseLines(readFileSync(join(root, file), 'utf8'));
  lines.forEach((line, index) => {
    // [text](target) and [text](target "title"); images too.
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [pathPart, anchor] = target.split('#', 2);
      const where = `${file}:${index + 1}`;
      const resolved = pathPart === '' ? join(root, file) : resolve(join(root, dirname(file)), decodeURIComponent(pathPart));
      if (!resolved.startsWith(root)) {
        problems.push(`${where}: link ${target} leaves the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        problems.push(`${where}: link ${target}: ${relative(root, resolved)} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
        problems.push(`${where}: link ${target}: an anchor only resolves in a Markdown file`);
        continue;
      }
      if (!anchorsOf(resolved).has(decodeURIComponent(anchor).toLowerCase())) {
        problems.push(`${where}: link ${target}: ${relative(root, resolved)} has no heading with id "${anchor}"`);
      }
    }
  });
}

/** Source files the repository tracks (git), else every file outside node_modules, dist and the docs. */
function sourceFiles() {
  let files;
  try {
    files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\0')
      .filter(Boolean);
  } catch {
    files = [];
    const walk = (dir) => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        if (['node_modules', 'dist', '.git', 'generated', 'reports'].includes(entry.name)) continue;
        const path = dir === '.' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) walk(path);
        else files.push(path);
      }
    };
    walk('.');
  }
  return files.filter((f) => !f.endsWith('.md') && !f.startsWith('openapi/') && !f.includes('/generated/') && /\.(ts|mts|mjs|js|cjs|prisma|ya?ml|tpl|sh|json|txt)$|Dockerfile$|^\.ci\//.test(f) && f !== 'package-lock.json' && f !== 'scripts/check-docs.mjs');
}

function checkCitations() {
  const sections = new Set(
    [...readFileSync(join(root, CONTRACT), 'utf8').matchAll(/^##\s+§(\d+)\b/gm)].map((m) => m[1]),
  );
  if (sections.size === 0) problems.push(`${CONTRACT}: no "## §n" section headings found`);
  let cited = 0;
  for (const file of sourceFiles()) {
    if (!existsSync(join(root, file))) continue;
    const text = readFileSync(join(root, file), 'utf8');
    if (!text.includes('§') && !text.includes('docs/')) continue;
    text.split('\n').forEach((line, index) => {
      const where = `${file}:${index + 1}`;
      // In a comment (a string the service sends is behaviour, changed with its tests, not here).
      if (/(^\s*(\/\/|\/\*|\*|#)|\s\/\/\s).*\bSPEC\s*§/.test(line)) problems.push(`${where}: cites "SPEC §", a document outside the repository: cite ${CONTRACT} §n`);
      // "docs/contract.md §3", "docs/contract.md §1, §7", "docs/contract.md §§4–5" (each number is checked).
      for (const match of line.matchAll(/docs\/contract\.md\s+(§[\d§,\s–-]*(?:and\s+§\d+)?)/g)) {
        for (const number of match[1].match(/\d+/g) ?? []) {
          cited += 1;
          if (!sections.has(number)) problems.push(`${where}: cites ${CONTRACT} §${number}, which has no such section`);
        }
      }
      for (const match of line.matchAll(/\bdocs\/[\w./-]+?\.md\b/g)) {
        if (!existsSync(join(root, match[0]))) problems.push(`${where}: names ${match[0]}, which does not exist`);
      }
    });
  }
  return cited;
}

const markdown = markdownFiles();
for (const file of markdown) checkLinks(file);
const cited = existsSync(join(root, CONTRACT)) ? checkCitations() : (problems.push(`${CONTRACT} is missing`), 0);

if (problems.length > 0) {
  console.error(`docs: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`docs: ${markdown.length} Markdown files, every relative link and anchor resolves; ${cited} contract citations in the code, each a section of ${CONTRACT}`);
