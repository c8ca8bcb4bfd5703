/**
 * The package as npm ships it: `npm pack`, installed into an empty directory, gives a `keywarden`
 * command that runs a server and its CLI with nothing but the tarball and its dependencies (no
 * source tree, no development dependencies).
 *
 * The install is `npm ci` with a lockfile made from this project's own: the tarball plus the
 * dependency tree the project was tested with (its non-dev entries), so it is reproducible and
 * runs offline from the npm cache `npm ci` filled. Should the cache lack a package, it installs
 * from the registry instead.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/server.js';
import { runProcess, type ProcessRun, type RunOptions } from '../helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

async function succeed(command: string, args: readonly string[], options: RunOptions): Promise<ProcessRun> {
  const result = await runProcess(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** What `npm pack --json` says of the tarball. */
interface PackResult {
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: readonly { readonly path: string }[];
}

interface LockEntry {
  readonly version: string;
  readonly dev?: boolean;
  readonly [field: string]: unknown;
}

/**
 * A lockfile for a project depending on nothing but the tarball: the tarball's entry and this
 * project's non-dev entries, with the registry address npm itself would record.
 */
async function lockfileFor(tarball: string, registry: string): Promise<object> {
  const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  const spec = `file:${tarball}`;
  const packages: Record<string, unknown> = {
    '': { dependencies: { keywarden: spec } },
    'node_modules/keywarden': {
      version: pkg.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(await readFile(tarball)).digest('base64')}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      optionalDependencies: pkg.optionalDependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === '' || entry.dev) continue;
    const name = where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[where] = { ...entry, resolved: `${registry.replace(/\/+$/, '')}/${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  return { lockfileVersion: 3, requires: true, packages };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** The bare specifiers (packages, not relative paths) a built module imports, statically or dynamically. */
function packageImports(source: string): string[] {
  // A package name starts with a letter, digit or @ (so not ./, ../ or /; and not the ${…} of a template in some help text).
  return [...source.matchAll(/\b(?:from\s*|import\s*\(\s*|^import\s*)['"]([@a-z0-9][\w.\-/@:]*)['"]/gim)].map((m) => m[1]!);
}

const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

describe('the npm package', function () {
  this.timeout(60_000);

  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: string;
  let installed: string;
  let packed: PackResult;
  let server: ChildProcess | undefined;

  before(async function () {
    this.timeout(300_000);
    dir = await tempDir('keywarden-pack-');
    // `npm test` has just built dist/ and the WASM; the prepare script would build them again.
    const pack = await succeed('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir.path], { cwd: ROOT, env: process.env });
    packed = (JSON.parse(pack.stdout) as PackResult[])[0]!;
    const tarball = path.join(dir.path, packed.filename);

    app = path.join(dir.path, 'app');
    await mkdir(app);
    const registry = (await succeed('npm', ['config', 'get', 'registry'], { cwd: ROOT, env: process.env })).stdout.trim();
    // As a user's npm does, native addons are built for the Node that runs them: this one, whose
    // headers come with the registry package the clone takes it from.
    const nodedir = (await succeed(process.execPath, [path.join(ROOT, 'scripts/native-for-runtime.js'), '--nodedir'], { cwd: ROOT, env: process.env })).stdout.trim();
    const env = nodedir ? { ...process.env, npm_config_nodedir: nodedir } : process.env;
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ private: true, dependencies: { keywarden: `file:${tarball}` }, allowScripts: { 'classic-level': true, 'unix-dgram': true } }));
    await writeFile(path.join(app, 'package-lock.json'), JSON.stringify(await lockfileFor(tarball, registry)));
    const started = Date.now();
    let source = 'offline from the npm cache';
    const offline = await runProcess('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: app, env });
    if (offline.code !== 0) {
      if (!offline.stderr.includes('ENOTCACHED')) throw new Error(`npm ci --offline failed:\n${offline.stderr}`);
      source = 'from the registry (the npm cache lacked a package)';
      await succeed('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, env });
    }
    console.log(`      installed ${source} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    installed = path.join(app, 'node_modules/keywarden');
  });

  after(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      // The server leads its own process group: nothing it started outlives it.
      process.kill(-server.pid!, 'SIGKILL');
      await exited;
    }
    await dir?.remove();
  });

  it('carries the built JavaScript with its type declarations, the WASM module, the built web UI, licence, changelog, docs and examples, and no tests, benchmarks, sources or source maps', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).to.include.members(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bin/keywarden.js', 'build/wasm/keywarden.wasm', 'dist/core/cli/main.js', 'dist/core/server.js', 'dist/sdk/index.js', 'dist/sdk/index.d.ts', 'dist/sdk/crypto.js', 'dist/sdk/crypto.d.ts']);
    expect(paths).to.include('build/ui/index.html');
    expect(paths).to.include.members(['docs/deployment.md', 'examples/systemd/keywarden.service', 'examples/memo-plugin/index.js', 'examples/self-init/keywarden.hcl']);
    // The tour's stand-in provider runs on the test fixtures, which do not ship: it stays in the clone.
    const shipped =
      /^(?:package\.json|README\.md|LICENSE|CHANGELOG\.md|bin\/keywarden\.js|build\/wasm\/keywarden\.wasm|build\/ui\/(?:index\.html|assets\/main-[A-Z0-9]+\.(?:js|css))(?:\.br|\.gz)?|dist\/(?:core|plugins|sdk|storage|wasm)\/.+\.(?:js|d\.ts)|docs\/[\w-]+\.md|docs\/images\/[\w-]+\.(?:png|svg)|examples\/systemd\/[\w.-]+|examples\/memo-plugin\/(?:README\.md|index\.js|package\.json)|examples\/self-init\/keywarden\.hcl)$/;
    expect(paths.filter((p) => !shipped.test(p)), 'files that should not ship').to.deep.equal([]);
    console.log(`      packed ${(packed.size / 1024).toFixed(0)} kB, unpacked ${(packed.unpackedSize / 1024).toFixed(0)} kB, ${paths.length} files`);
  });

  it('links from its README and docs only to files it carries (or to web pages)', async () => {
    const paths = new Set(packed.files.map((f) => f.path));
    const broken: string[] = [];
    for (const doc of [...paths].filter((p) => p === 'README.md' || /^docs\/.+\.md$/.test(p) || p === 'examples/memo-plugin/README.md')) {
      const text = await readFile(path.join(installed, doc), 'utf8');
      // Markdown links and images whose target is a path, not a web page or an anchor on the same page.
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const file = path.posix.normalize(path.posix.join(path.posix.dirname(doc), target!.split('#')[0]!));
        if (!paths.has(file)) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken, 'links to files the package does not carry').to.deep.equal([]);
  });

  it('declares every package its code imports as a dependency, and each one loads from the installed tree', async () => {
    const pkg = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
      optionalDependencies: Record<string, string>;
    };
    // Type declarations name packages too (a TypeScript plugin resolves them), but load nothing at run time.
    const specifiers = new Set<string>();
    const loaded = new Set<string>();
    for (const file of await filesUnder(path.join(installed, 'dist'))) {
      for (const specifier of packageImports(await readFile(file, 'utf8'))) {
        if (isBuiltin(specifier)) continue;
        specifiers.add(specifier);
        if (!file.endsWith('.d.ts')) loaded.add(specifier);
      }
    }
    expect(specifiers.size).to.be.greaterThan(10);
    // The package's own name is a self-reference through its "exports" (the SDK's examples name
    // keywarden/sdk); it is loaded below like the others, which checks that the export resolves.
    expect(loaded).to.include('keywarden/sdk');
    // The SDK's sub-path, which an external plugin imports by name, resolves from the installed tree too.
    loaded.add('keywarden/sdk/crypto');
    // koffi (optional) is required lazily by core/native-heap.ts, by a name this scan does not see;
    // its prebuilt binary must load from the installed tree for an idle server to return memory.
    if (process.platform === 'linux' && process.arch === 'x64') loaded.add('koffi');
    // unix-dgram is optional (a native addon whose build may fail; the syslog device loads it lazily).
    const declared = { ...pkg.dependencies, ...pkg.optionalDependencies };
    const undeclared = [...specifiers].filter((s) => packageName(s) !== pkg.name && !(packageName(s) in declared));
    expect(undeclared, 'imported but not in "dependencies" or "optionalDependencies"').to.deep.equal([]);
    // Resolved from inside the installed package, as its own modules resolve them.
    const load = await runProcess(process.execPath, ['--input-type=module', '-e', 'for (const s of JSON.parse(process.argv[1])) await import(s);', JSON.stringify([...loaded])], {
      cwd: installed,
      env: { PATH: process.env.PATH },
    });
    expect(load.code, load.stderr).to.equal(0);
  });

  it('gives a keywarden command that runs a server (its web UI on), initializes, unseals, logs in and encrypts through the CLI', async () => {
    const bin = path.join(app, 'node_modules/.bin/keywarden');
    const home = path.join(dir.path, 'home');
    await mkdir(home);
    const config = path.join(dir.path, 'keywarden.json');
    await writeFile(config, JSON.stringify({ listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } }, storage: { leveldb: { path: path.join(dir.path, 'data') } }, ui: true }));
    // No NODE_PATH, no inherited Vault variables: only the installed tree and this environment.
    const baseEnv = { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, HOME: home };
    server = spawn(bin, ['server', '-workers=1', '-config', config], { cwd: app, env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const address = await listeningAddress(server);

    const page = await fetch(`${address}/ui/`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.contain("script-src 'self'");
    const script = /src="(\/ui\/assets\/[^"]+)"/.exec(await page.text())![1]!;
    expect((await fetch(`${address}${script}`)).status).to.equal(200);

    const env = { ...baseEnv, KEYWARDEN_ADDR: address };
    const cli = (...args: string[]) => succeed(bin, args, { cwd: app, env });
    const init = JSON.parse((await cli('operator', 'init', '-key-shares=1', '-key-threshold=1', '-format=json')).stdout) as { unseal_keys_b64: string[]; root_token: string };
    expect((await cli('operator', 'unseal', init.unseal_keys_b64[0]!)).stdout).to.match(/Sealed\s+false/);
    await cli('login', init.root_token);
    await cli('secrets', 'enable', 'transit');
    await cli('write', '-f', 'transit/keys/k');
    const plaintext = Buffer.from('installed from the tarball').toString('base64');
    const encrypted = JSON.parse((await cli('write', '-format=json', 'transit/encrypt/k', `plaintext=${plaintext}`)).stdout) as { data: { ciphertext: string } };
    expect(encrypted.data.ciphertext).to.match(/^vault:v1:[A-Za-z0-9+/]+=*$/);
    const decrypted = JSON.parse((await cli('write', '-format=json', 'transit/decrypt/k', `ciphertext=${encrypted.data.ciphertext}`)).stdout) as { data: { plaintext: string } };
    expect(decrypted.data.plaintext).to.equal(plaintext);
  });
});

/** The address from the server's "listening" log line; rejects with its output if it exits first. */
function listeningAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the server did not listen within 30 s:\n${output}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"address":"([^"]+)"[^\n]*"msg":"listening"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
}
