/**
 * `keywarden/sdk` as a plugin outside this repository imports it: through the package's `exports`
 * map, with its type declarations beside it, at the package's version.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface PackageJson {
  readonly version: string;
  readonly exports: Record<string, { readonly types: string; readonly default: string }>;
}

describe('keywarden/sdk', () => {
  let pkg: PackageJson;
  before(async () => {
    pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;
  });

  it('resolves by the package name and carries the framework, errors, contract and helpers', async () => {
    // A variable, so the compiler does not look for the declarations this very build emits.
    const specifier = 'keywarden/sdk';
    const sdk = (await import(specifier)) as Record<string, unknown>;
    for (const name of ['definePath', 'FrameworkBackend', 'listResponse', 'parseDurationSeconds', 'BadRequestError', 'httpStatusOf', 'SERVICES', 'systemClock', 'cidrAllows', 'nextTurn', 'decodeBase64', 'KeyedLock']) {
      expect(sdk, name).to.have.property(name);
    }
    // The WASM core and transit's bulk helpers are a sub-path's, not the root's.
    for (const name of ['WasmCrypto', 'bufferView', 'encodeRuns', 'JsonText', 'BASE64_INVALID', 'hashToolPath', 'randomToolPaths']) {
      expect(sdk, name).not.to.have.property(name);
    }
    expect(sdk.SDK_VERSION).to.equal(pkg.version);
    expect(import.meta.resolve(specifier)).to.equal(new URL(pkg.exports['./sdk']!.default, `file://${ROOT}/`).href);
  });

  it('offers the WASM crypto core and the helpers of bulk crypto answers at keywarden/sdk/crypto', async () => {
    const specifier = 'keywarden/sdk/crypto';
    const crypto = (await import(specifier)) as Record<string, unknown>;
    for (const name of ['WasmCrypto', 'bufferView', 'encodeRuns', 'releaseBuffer', 'JsonText', 'BASE64_INVALID', 'HASH_ALGORITHMS', 'hashToolPath', 'randomToolPaths']) {
      expect(crypto, name).to.have.property(name);
    }
    expect(import.meta.resolve(specifier)).to.equal(new URL(pkg.exports['./sdk/crypto']!.default, `file://${ROOT}/`).href);
    expect(await readFile(path.join(ROOT, pkg.exports['./sdk/crypto']!.types), 'utf8')).to.match(/\bWasmCrypto\b/);
  });

  it('ships type declarations for the plugin contract', async () => {
    const types = await readFile(path.join(ROOT, pkg.exports['./sdk']!.types), 'utf8');
    for (const name of ['PluginManifest', 'PluginContext', 'Storage', 'LogicalRequest', 'FieldSpecs', 'Clock', 'Logger']) expect(types, name).to.match(new RegExp(`\\b${name}\\b`));
    const plugin = await readFile(path.join(ROOT, 'dist/core/plugins/plugin.d.ts'), 'utf8');
    expect(plugin).to.match(/export interface PluginManifest/);
  });
});
