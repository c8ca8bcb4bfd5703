// Removes dist/ before `npm pack` and `npm publish` (npm's prepack step): the build that prepare runs
// next then starts from nothing, so the package never carries the output of a source file deleted
// since the last build.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
