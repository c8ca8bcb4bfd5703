/**
 * What confines an isolated plugin's process, decided on the host: the Node.js it needs, the
 * flags it starts with, and the environment a catalog entry may give it.
 *
 * The process runs under Node's permission model (https://nodejs.org/api/permissions.html):
 * it may read the server's compiled code, the packages that code imports and the WASM core, and
 * nothing else; it may write no file, start no process or worker, load no native addon and no
 * WASI module. Its plugin module is handed over as verified bytes, so not even that file is read.
 * By Node's own account the permission model is a seat belt for trusted code, not a sandbox that
 * holds against code written to escape it; docs/writing-a-plugin.md says what that leaves.
 */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { BadRequestError } from '../../errors.js';
import { syncHooksApi } from './module-hooks.js';

/** The package's root: dist/core/plugins/isolation/ is four folders below it. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The process's entry module. */
export const PLUGIN_MAIN = fileURLToPath(new URL('./plugin-main.js', import.meta.url));

/** What a Node.js offers that isolation needs. */
export interface Runtime {
  readonly version: string;
  /** `module.registerHooks` (Node 22.15). */
  readonly registerHooks: boolean;
  /** The `--permission` flag (Node 22.13; before, `--experimental-permission`). */
  readonly permission: boolean;
}

/** This Node.js. */
export function currentRuntime(): Runtime {
  return { version: process.version, registerHooks: syncHooksApi() !== undefined, permission: process.allowedNodeEnvironmentFlags.has('--permission') };
}

/**
 * Why isolated plugins cannot run on a Node.js, or undefined when they can. They need the
 * permission model without its experimental flag and in-thread module hooks: the older off-thread
 * hooks would need a grant to start workers, which the plugin would then have too. A Node without
 * them is refused rather than left to run a plugin unconfined.
 */
export function unsupportedRuntime(runtime: Runtime = currentRuntime()): string | undefined {
  if (runtime.registerHooks && runtime.permission) return undefined;
  return (
    `external plugins need Node.js 22.15 or later, and this is ${runtime.version}: they run confined by ` +
    'its permission model (--permission) with in-thread module hooks (module.registerHooks)'
  );
}

/** The Node.js flags of a plugin process with a heap of `heapMb`. */
export function processFlags(heapMb: number): string[] {
  return [
    '--permission',
    ...readablePaths().map((p) => `--allow-fs-read=${p}`),
    `--max-old-space-size=${heapMb}`,
    // node:sqlite opens and writes database files without asking the permission model (Node 24.x),
    // so it is switched off where this Node has it.
    ...(process.allowedNodeEnvironmentFlags.has('--experimental-sqlite') ? ['--no-experimental-sqlite'] : []),
  ];
}

let readable: readonly string[] | undefined;

/**
 * What a plugin process may read: the compiled code (dist/, the entry and the SDK among it), the
 * package.json that makes it ES modules, the WASM core, and the node_modules folders its imports
 * resolve in (the package's own, and those above it when the package is installed as a
 * dependency). Symbolic links are granted as themselves and as what they lead to.
 */
function readablePaths(): readonly string[] {
  if (readable) return readable;
  const paths = [path.join(PACKAGE_ROOT, 'dist'), path.join(PACKAGE_ROOT, 'package.json'), path.join(PACKAGE_ROOT, 'build', 'wasm', 'keywarden.wasm')];
  for (let dir = path.resolve(PACKAGE_ROOT); ; dir = path.dirname(dir)) {
    const modules = path.join(dir, 'node_modules');
    if (existsSync(modules)) paths.push(modules);
    if (path.dirname(dir) === dir) break;
  }
  const all = new Set<string>();
  for (const p of paths) {
    if (!existsSync(p)) continue;
    all.add(p);
    all.add(realpathSync(p));
  }
  readable = [...all];
  return readable;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Variables read before any plugin code runs, by Node (NODE_OPTIONS may grant permissions or
 * preload code; others write files), libuv, the dynamic loader (LD_PRELOAD loads native code),
 * glibc or OpenSSL (OPENSSL_CONF may load an engine): with one of them, a catalog entry could
 * lift the confinement before the plugin starts.
 */
const REFUSED_ENV = /^(?:NODE_|UV_|LD_|DYLD_|OPENSSL_|SSL_CERT_|MALLOC_|GLIBC_TUNABLES$)/i;

/**
 * A catalog entry's `env` as the process's whole environment.
 * @throws BadRequestError naming the first pair that is not `NAME=value` or sets a refused name.
 */
export function pluginEnvironment(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at);
    if (at <= 0 || !ENV_NAME.test(name)) throw new BadRequestError(`env entry "${pair}" must be NAME=value, the name letters, digits and "_"`);
    if (REFUSED_ENV.test(name)) {
      throw new BadRequestError(`env entry "${name}" is refused: it changes how the plugin's process starts, before its confinement holds`);
    }
    env[name] = pair.slice(at + 1);
  }
  return env;
}

let signalGuarded = false;

/**
 * SIGUSR1 makes Node open its inspector, which would let whoever sends it run code in the host;
 * a plugin process runs as the host's OS user and so could send it. Once a plugin process may
 * run, the host therefore answers SIGUSR1 by logging it (a listener keeps Node from opening the
 * inspector). Start the server with --inspect to debug it.
 */
export function ignoreInspectorSignal(logger: Logger): void {
  if (signalGuarded) return;
  signalGuarded = true;
  process.on('SIGUSR1', () => logger.warn('SIGUSR1 ignored: with external plugins running, a signal cannot open the inspector (start the server with --inspect instead)'));
}
