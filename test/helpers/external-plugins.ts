/**
 * External plugin modules for tests, written into a plugin directory as an operator would install
 * them: one ESM file importing `keywarden/sdk`. The "echo" plugin stores values, reports what its
 * process sees, and fails on demand in each of the ways the isolation must contain; any compiled
 * in-process plugin can be bundled into such a file too (`bundleExternal`).
 */
import { createHash } from 'node:crypto';
import { builtinModules } from 'node:module';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';

/** The compiled SDK's modules, which a bundled plugin imports by the package's names instead of carrying them. */
const SDK_MODULES: ReadonlyMap<string, string> = new Map([
  [fileURLToPath(new URL('../../sdk/index.js', import.meta.url)), 'keywarden/sdk'],
  [fileURLToPath(new URL('../../sdk/crypto.js', import.meta.url)), 'keywarden/sdk/crypto'],
]);

/**
 * A compiled plugin module (a file under dist/) as an operator would ship it outside the server:
 * bundled by esbuild into one ES module that imports only the SDK's modules and node: built-ins
 * (its CommonJS dependencies reach built-ins through a `require` made with node:module),
 * whose default export is the manifest `exportName` renamed `asName` (so it can be registered in
 * the catalog beside the in-process original). Dependencies written as CommonJS keep their
 * `require` of Node's built-ins, named `node:` as the plugin process allows.
 */
export async function bundleExternal(moduleFile: string, exportName: string, asName: string): Promise<string> {
  const result = await build({
    stdin: {
      contents: `import { ${exportName} as manifest } from ${JSON.stringify(moduleFile)};\nexport default { ...manifest, name: ${JSON.stringify(asName)} };\n`,
      resolveDir: path.dirname(moduleFile),
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
    logLevel: 'silent',
    // CommonJS dependencies (yaml's Node build) require Node's built-ins; an ES module has no
    // `require` of its own, so the bundle makes one. Built-ins are named with `node:`, the only
    // spelling a plugin process lets through.
    banner: { js: "import { createRequire as keywardenCreateRequire } from 'node:module'; const require = keywardenCreateRequire(import.meta.url);" },
    plugins: [
      {
        name: 'keywarden-sdk',
        setup(b) {
          b.onResolve({ filter: /sdk\/(?:index|crypto)\.js$/ }, (args) => {
            const name = SDK_MODULES.get(path.resolve(args.resolveDir, args.path));
            return name ? { path: name, external: true } : undefined;
          });
          b.onResolve({ filter: /^[a-z_][a-z0-9_/]*$/ }, (args) => (builtinModules.includes(args.path) ? { path: `node:${args.path}`, external: true } : undefined));
        },
      },
    ],
  });
  // esbuild keeps a service process for the next build; no test leaves a process behind.
  await stop();
  return result.outputFiles[0]!.text;
}

export interface EchoOptions {
  readonly name?: string;
  readonly kind?: 'secret' | 'auth';
  readonly version?: string;
  /** Replaces the module text after the manifest (to break it on purpose). */
  readonly extra?: string;
}

export function echoSource(options: EchoOptions = {}): string {
  const { name = 'echo', kind = 'secret', version = '1.0.0', extra = '' } = options;
  return `import { FrameworkBackend, definePath, listResponse } from 'keywarden/sdk';
${extra}
const instance = Math.random().toString(36).slice(2);
const value = definePath({
  pattern: 'data/:name',
  fields: {
    name: { type: 'string', description: 'Key.', required: true },
    value: { type: 'string', description: 'Value.' },
  },
  operations: {
    read: { summary: 'Read.', handler: async (req, input) => {
      const raw = await req.storage.get('data/' + input.name);
      return raw ? { data: { value: Buffer.from(raw).toString('utf8') } } : null;
    } },
    update: { summary: 'Write.', handler: async (req, input) => {
      await req.storage.put('data/' + input.name, Buffer.from(input.value ?? ''));
      return null;
    } },
    delete: { summary: 'Delete.', handler: async (req, input) => { await req.storage.delete('data/' + input.name); return null; } },
  },
  synopsis: 'A stored value.',
  description: 'Kept in the mount storage.',
});
const list = definePath({
  pattern: 'data/',
  fields: {},
  operations: { list: { summary: 'List.', handler: async (req) => listResponse(await req.storage.list('data/')) } },
  synopsis: 'List values.',
  description: 'Names.',
});
const raw = definePath({
  pattern: 'raw',
  fields: { key: { type: 'string', description: 'Any storage key.', required: true } },
  operations: { read: { summary: 'Read any key of the mount storage.', handler: async (req, input) => {
    const got = await req.storage.get(input.key);
    return { data: { found: got !== undefined } };
  } } },
  synopsis: 'Raw storage read.',
  description: 'For tests of the storage boundary.',
});
const info = definePath({
  pattern: 'info',
  fields: {},
  operations: { read: { summary: 'What the process sees.', handler: async (req) => ({ data: {
    version: ${JSON.stringify(version)},
    instance,
    pid: process.pid,
    env: Object.keys(process.env).sort(),
    argv: process.argv.slice(2),
    token: req.clientToken ?? null,
    headers: Object.keys(req.headers).sort(),
    globals: ['Host', 'keyring'].filter((n) => n in globalThis),
  } }) } },
  synopsis: 'Process facts.',
  description: 'Version, instance, environment.',
});
const fail = definePath({
  pattern: 'fail/:how',
  fields: { how: { type: 'string', description: 'throw, crash, exit, memory, block or hang.', required: true } },
  operations: { read: { summary: 'Fail on purpose.', handler: async (req, input) => {
    switch (input.how) {
      case 'throw': throw new Error('a handler error with a detail the client must not see');
      case 'crash': setImmediate(() => { throw new Error('an uncaught error'); }); return new Promise(() => {});
      case 'exit': process.exit(3);
      case 'memory': { const hog = []; for (;;) hog.push(new Array(1e5).fill(hog.length)); }
      case 'block': for (;;) {}
      case 'hang': return new Promise(() => {});
      default: return { data: { how: input.how } };
    }
  } } },
  synopsis: 'Failures.',
  description: 'Each way a plugin can go wrong.',
});
export default {
  name: ${JSON.stringify(name)},
  kind: ${JSON.stringify(kind)},
  version: ${JSON.stringify(version)},
  description: 'Echo (test plugin).',
  factory: () => new FrameworkBackend({ description: 'Echo (test plugin).', paths: [value, list, raw, info, fail] }),
};
`;
}

/** Writes a module into the directory and returns its hex SHA-256. */
export async function installModule(directory: string, file: string, source: string): Promise<string> {
  await writeFile(path.join(directory, file), source);
  return createHash('sha256').update(source).digest('hex');
}

/** An auth method module: `login` (unauthenticated) answers an auth result; renewals pass its `renew` hook. */
export function gateSource(): string {
  return `import { FrameworkBackend, definePath, PermissionDeniedError } from 'keywarden/sdk';
let renewals = 0;
const login = definePath({
  pattern: 'login',
  fields: { user: { type: 'string', description: 'Who.', required: true } },
  unauthenticated: true,
  operations: { update: { summary: 'Log in.', handler: async (req, input) => {
    if (input.user === 'mallory') throw new PermissionDeniedError();
    return { auth: { policies: ['default'], displayName: input.user, alias: { name: input.user }, ttl: 600, renewable: true } };
  } } },
  synopsis: 'Log in.',
  description: 'Any user but mallory.',
});
const stats = definePath({
  pattern: 'stats',
  fields: {},
  operations: { read: { summary: 'Renewals seen.', handler: async () => ({ data: { renewals } }) } },
  synopsis: 'Stats.',
  description: 'How many renewals the hook saw.',
});
export default {
  name: 'gate',
  kind: 'auth',
  version: '1.0.0',
  description: 'Gate (test auth method).',
  factory: () => new FrameworkBackend({
    description: 'Gate (test auth method).',
    paths: [login, stats],
    renew: async (req, auth) => { renewals++; return { ...auth, ttl: 300 }; },
  }),
};
`;
}
