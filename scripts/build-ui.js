// Builds the operator web UI (ui/) into build/ui: one esbuild bundle of script and one of styles,
// named by content hash, an index.html that names them, and brotli and gzip copies of each file
// for the server to send as they are. Prints the time taken and the compressed size.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'build', 'ui');
const started = performance.now();

rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'assets'), { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: ['ui/main.tsx'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
const script = outputs.find((name) => name.endsWith('.js'));
const style = outputs.find((name) => name.endsWith('.css'));
if (!script || !style) throw new Error(`build-ui: expected one .js and one .css output, got ${outputs.join(', ')}`);

const index = readFileSync(path.join(root, 'ui', 'index.html'), 'utf8')
  .replace('%SCRIPT%', `/ui/assets/${script}`)
  .replace('%STYLE%', `/ui/assets/${style}`);
writeFileSync(path.join(out, 'index.html'), index);

let compressed = 0;
for (const file of [path.join(out, 'index.html'), ...outputs.map((name) => path.join(out, 'assets', name))]) {
  const body = readFileSync(file);
  const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  writeFileSync(file + '.br', br);
  writeFileSync(file + '.gz', gzipSync(body, { level: 9 }));
  compressed += br.length;
}
console.log(`build-ui: ${outputs.join(', ')}: ${(compressed / 1024).toFixed(1)} KiB brotli, in ${Math.round(performance.now() - started)} ms`);
