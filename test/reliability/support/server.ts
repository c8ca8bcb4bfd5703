/**
 * In-process servers for the reliability suite: the real `startServer` (HTTP listener, host,
 * plugins), on a physical store the test holds, so it can snapshot it or make it fail.
 */
import { pino, type Logger } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import type { ServerConfig } from '../../../core/config/config.js';
import type { PhysicalStorage } from '../../../storage/storage.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { testConfig } from '../../helpers/server.js';
import { DEFAULT_AUDIT_CONFIG, type AuditConfig } from '../../../core/audit/rules.js';
import { Api } from './http.js';

export interface ReliabilityServer extends RunningServer {
  readonly api: Api;
  readonly rootToken: string;
  readonly unsealKey: Buffer;
  readonly physical: PhysicalStorage;
  /** Unseals again (after a test or the fuzzer sealed it). */
  unseal(): Promise<void>;
}

export interface ReliabilityServerOptions {
  readonly physical?: PhysicalStorage;
  readonly listener?: Partial<ServerConfig['listeners'][number]>;
  readonly logger?: Logger;
  readonly plugins?: readonly unknown[];
  /** Audit settings of the configuration; unset ones keep their secure default. */
  readonly audit?: Partial<AuditConfig>;
}

/** Starts, initializes (one share) and unseals a server; `api` carries the root token. */
export async function startReliabilityServer(options: ReliabilityServerOptions = {}): Promise<ReliabilityServer> {
  const physical = options.physical ?? new MemoryStorage();
  const base = testConfig();
  const server = await startServer({
    config: {
      ...base,
      listeners: [{ ...base.listeners[0]!, ...(options.listener ?? {}) }],
      ...(options.audit ? { audit: { ...DEFAULT_AUDIT_CONFIG, ...options.audit } } : {}),
    },
    physical,
    plugins: options.plugins ?? [],
    logger: options.logger ?? pino({ level: 'silent' }),
  });
  try {
    const api = new Api(server.address);
    const init = await api.expect('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, [200]);
    const unsealKey = Buffer.from(init.json.keys[0] as string, 'hex');
    await api.expect('PUT', 'sys/unseal', { key: init.json.keys[0] }, [200]);
    api.token = init.json.root_token as string;
    return Object.assign(server, {
      api,
      rootToken: api.token,
      unsealKey,
      physical,
      unseal: () => server.host.seal.unsealWithKey(Buffer.from(unsealKey)),
    });
  } catch (err) {
    await server.close();
    throw err;
  }
}

/** Whether a plugin of this name is compiled in (or was passed to the server). */
export function pluginRegistered(server: RunningServer, name: string): boolean {
  return server.host.registry.has(name);
}

/**
 * The mount-relative patterns a mounted backend serves, from the framework's own path
 * definitions: what the suite checks before running a scenario that needs a path.
 */
export function mountedPatterns(server: RunningServer, table: 'secret' | 'auth', mountPath: string): string[] {
  try {
    return server.host.mounts?.live(table, mountPath).backend?.describePaths().map((p) => p.pattern) ?? [];
  } catch {
    return [];
  }
}
