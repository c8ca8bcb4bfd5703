/**
 * Module hooks of an isolated plugin's worker. The plugin's module is served from the bytes the
 * host verified (not read again from disk); `keywarden/sdk` resolves to the host's own SDK, so a
 * plugin runs against the framework of the server it runs in. The checksum covers one file, so
 * the module may import nothing else but Node's built-ins: a plugin with dependencies ships
 * bundled.
 */
interface HookData {
  readonly entryUrl: string;
  readonly source: string;
  readonly sdkUrl: string;
}

interface ResolveContext {
  readonly parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;
type NextLoad = (url: string, context: unknown) => Promise<{ format?: string; source?: unknown }>;

let data: HookData;

export function initialize(hookData: HookData): void {
  data = hookData;
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string; shortCircuit?: boolean }> {
  if (context.parentURL === data.entryUrl) {
    if (specifier === 'keywarden/sdk') return { url: data.sdkUrl, shortCircuit: true };
    if (!specifier.startsWith('node:')) {
      throw new Error(`it imports "${specifier}": a plugin is one module file and may import only keywarden/sdk and node: built-ins (bundle its dependencies)`);
    }
  }
  return next(specifier, context);
}

export async function load(url: string, context: unknown, next: NextLoad): Promise<{ format?: string; source?: unknown; shortCircuit?: boolean }> {
  if (url === data.entryUrl) return { format: 'module', source: data.source, shortCircuit: true };
  return next(url, context);
}
