/**
 * Module hooks of an isolated plugin's process, run on its main thread by `module.registerHooks`
 * (https://nodejs.org/api/module.html#moduleregisterhooksoptions): the off-thread hooks of
 * `module.register` would need the process to be allowed workers, and the plugin with it. The
 * plugin's module is served from the bytes the host verified (the file is never read);
 * `keywarden/sdk` and its sub-path `keywarden/sdk/crypto` resolve to the host's own SDK, so a
 * plugin runs against the framework of the server it runs in. The checksum covers one file, so the module may import nothing else but
 * Node's built-ins: a plugin with dependencies ships bundled.
 */
import nodeModule from 'node:module';

/** Where a plugin's imports of the SDK lead: the host's own modules. */
const SDK_URLS: ReadonlyMap<string, string> = new Map([
  ['keywarden/sdk', new URL('../../../sdk/index.js', import.meta.url).href],
  ['keywarden/sdk/crypto', new URL('../../../sdk/crypto.js', import.meta.url).href],
]);

interface ResolveContext {
  readonly parentURL?: string | undefined;
}
type ResolveResult = { readonly url: string; readonly format?: string | null; readonly shortCircuit?: boolean };
type LoadResult = { readonly format: string; readonly source?: string | ArrayBuffer | Uint8Array | null; readonly shortCircuit?: boolean };

/** The synchronous hooks API of Node ≥ 22.15 (not yet in the @types/node the project builds with). */
export interface SyncHooksApi {
  registerHooks(hooks: {
    resolve(specifier: string, context: ResolveContext, next: (specifier: string, context: ResolveContext) => ResolveResult): ResolveResult;
    load(url: string, context: object, next: (url: string, context: object) => LoadResult): LoadResult;
  }): unknown;
}

/** Node's `module.registerHooks`, or undefined on a Node without it. */
export function syncHooksApi(): SyncHooksApi | undefined {
  const candidate = nodeModule as unknown as Partial<SyncHooksApi>;
  return typeof candidate.registerHooks === 'function' ? (candidate as SyncHooksApi) : undefined;
}

/**
 * Serves the plugin at `entryUrl` from `source` and confines its imports.
 * @throws Error when this Node has no `module.registerHooks` (the host refuses such a Node first).
 */
export function installModuleHooks(entryUrl: string, source: string): void {
  const api = syncHooksApi();
  if (!api) throw new Error('this Node.js has no module.registerHooks');
  api.registerHooks({
    resolve(specifier, context, next) {
      if (context.parentURL === entryUrl) {
        const sdk = SDK_URLS.get(specifier);
        if (sdk) return { url: sdk, shortCircuit: true };
        if (!specifier.startsWith('node:')) {
          throw new Error(`it imports "${specifier}": a plugin is one module file and may import only keywarden/sdk, keywarden/sdk/crypto and node: built-ins (bundle its dependencies)`);
        }
      }
      return next(specifier, context);
    },
    load(url, context, next) {
      if (url === entryUrl) return { format: 'module', source, shortCircuit: true };
      return next(url, context);
    },
  });
}
