/**
 * The SDK is the whole of what a plugin may use from Keywarden: every module under `plugins/` (and
 * the fixture plugins the loader tests use) imports Keywarden only through `sdk/index.js` (and its
 * sub-path `sdk/crypto.js`), never the
 * host's internals (`core/`, `storage/`) nor the WASM core directly. The built-in plugins thereby
 * prove the SDK is enough to write one.
 */
import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The SDK's modules: `keywarden/sdk` and its sub-path `keywarden/sdk/crypto`. */
const SDK = [path.join(ROOT, 'sdk/index.ts'), path.join(ROOT, 'sdk/crypto.ts')];

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
}

/** Every module specifier a TypeScript file names: static imports and re-exports, `import()` and `import type`. */
function specifiersOf(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

/** The imports of `file` that reach outside its own plugin folder to anything but the SDK. */
function forbiddenImports(file: string, source: string, home: string): string[] {
  const out: string[] = [];
  for (const specifier of specifiersOf(source)) {
    if (!specifier.startsWith('.')) continue;
    const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
    if (SDK.includes(target) || target.startsWith(home + path.sep)) continue;
    out.push(`${path.relative(ROOT, file)} imports ${specifier}`);
  }
  return out;
}

describe('the plugin boundary', () => {
  it('no built-in plugin imports anything of Keywarden but the SDK', async () => {
    const files = await sourcesUnder('plugins');
    expect(files.length).to.be.greaterThan(50);
    const offending: string[] = [];
    for (const file of files) {
      const home = path.join(ROOT, 'plugins', path.relative(path.join(ROOT, 'plugins'), file).split(path.sep)[0]!);
      offending.push(...forbiddenImports(file, await readFile(file, 'utf8'), home));
    }
    expect(offending).to.deep.equal([]);
  });

  it('the fixture plugins the loader tests load (working and broken) are written against the SDK alone', async () => {
    const files = [...(await sourcesUnder('test/fixtures/plugins')), ...(await sourcesUnder('test/fixtures/broken-plugins'))];
    expect(files.length).to.be.greaterThan(0);
    const offending: string[] = [];
    for (const file of files) offending.push(...forbiddenImports(file, await readFile(file, 'utf8'), path.dirname(file)));
    expect(offending).to.deep.equal([]);
  });

  it('the check catches an import of the host internals, a relative re-export and a dynamic import', () => {
    const home = path.join(ROOT, 'plugins/example');
    const file = path.join(home, 'paths/thing.ts');
    const source = [
      "import { BadRequestError } from '../../../core/errors.js';",
      "export { Storage } from '../../../storage/storage.js';",
      "const wasm = await import('../../../wasm/index.js');",
      "import { definePath } from '../../../sdk/index.js';",
      "import { helper } from '../helper.js';",
      "import { Ajv } from 'ajv';",
    ].join('\n');
    expect(forbiddenImports(file, source, home)).to.deep.equal([
      'plugins/example/paths/thing.ts imports ../../../core/errors.js',
      'plugins/example/paths/thing.ts imports ../../../storage/storage.js',
      'plugins/example/paths/thing.ts imports ../../../wasm/index.js',
    ]);
  });
});
