// Runs first in `prepack` and `prepare`: the build needs the dev dependencies (assemblyscript,
// typescript, esbuild, …), which `npm ci` installs. Without them (`npm pack` in a fresh clone) the
// build would die on its first import with a stack trace; this says what to do instead.
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const missing = Object.keys(pkg.devDependencies ?? {}).filter((name) => !existsSync(new URL(`node_modules/${name}/package.json`, root)));
if (missing.length > 0) {
  const shown = missing.length > 4 ? `${missing.slice(0, 4).join(', ')} and ${missing.length - 4} more` : missing.join(', ');
  process.stderr.write(
    `\nkeywarden: building the package needs its dev dependencies, and ${shown} ${missing.length === 1 ? 'is' : 'are'} not installed.\n` +
      'Run `npm ci` first (it installs them and builds), then run this command again.\n\n',
  );
  process.exit(1);
}
