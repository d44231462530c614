import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ensureBuilt } from '../support/service-process.js';

const run = promisify(execFile);
const BUNDLE = join(process.cwd(), 'dist', 'service');

/**
 * What an operator sees in a stack trace when the service runs with --enable-source-maps: the
 * bundle's chunks map back to the TypeScript file and line, through the maps the bundle ships.
 */
async function originalOf(className: string): Promise<{ originalSource: string; originalLine: number }> {
  // esbuild may number a class it renames (keepNames still gives it its own name at run time).
  const declaration = new RegExp(`class ${className}\\d* \\{`);
  const chunk = readdirSync(BUNDLE)
    .filter((file) => file.endsWith('.mjs'))
    .find((file) => declaration.test(readFileSync(join(BUNDLE, file), 'utf8')));
  if (!chunk) throw new Error(`no chunk of dist/service holds class ${className}`);
  const line = readFileSync(join(BUNDLE, chunk), 'utf8').split('\n').findIndex((text) => declaration.test(text));
  const script = `
    import { findSourceMap } from 'node:module';
    import { pathToFileURL } from 'node:url';
    const url = pathToFileURL(${JSON.stringify(join(BUNDLE, chunk))}).href;
    await import(url);
    const entry = findSourceMap(url)?.findEntry(${line}, 0);
    process.stdout.write(JSON.stringify(entry ?? null));
  `;
  const { stdout } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], { env: { ...process.env, LOG_LEVEL: 'error' } });
  return JSON.parse(stdout) as { originalSource: string; originalLine: number };
}

describe('the bundle’s source maps', () => {
  beforeAll(async () => {
    await ensureBuilt();
  }, 300_000);

  it('map a chunk of dist/service back to the TypeScript file that defines the code', async () => {
    const entry = await originalOf('WriteRunner');
    expect(entry.originalSource).toMatch(/\/libs\/agents\/src\/runner\/write-runner\.ts$/);
    const source = readFileSync('libs/agents/src/runner/write-runner.ts', 'utf8').split('\n');
    expect(source[entry.originalLine]).toContain('class WriteRunner');
  }, 60_000);

  it('are linked, not inlined, and carry no source text (the image stays small)', () => {
    const maps = readdirSync(BUNDLE).filter((file) => file.endsWith('.mjs.map'));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) expect(JSON.parse(readFileSync(join(BUNDLE, map), 'utf8')).sourcesContent).toBeUndefined();
    expect(readFileSync(join(BUNDLE, 'main.mjs'), 'utf8')).toMatch(/\/\/# sourceMappingURL=main\.mjs\.map\s*$/);
  });
});
