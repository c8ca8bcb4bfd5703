// Compiles wasm/assembly with AssemblyScript's own compiler API (release target of asconfig.json).
// Run by `npm run build`, and so by `npm ci` through `prepare`.
import asc from 'assemblyscript/asc';

const target = process.argv[2] ?? 'release';
const { error, stderr } = await asc.main(['--config', 'asconfig.json', '--target', target], {});
if (error) {
  console.error(stderr.toString());
  console.error(`wasm build failed: ${error.message}`);
  process.exit(1);
}
