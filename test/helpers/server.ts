/** Starts real servers for tests: an ephemeral port, in-memory or LevelDB storage, quiet logs. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { startServer, type RunningServer } from '../../core/server.js';
import type { ServerConfig } from '../../core/config/config.js';
import { DEFAULT_AUDIT_CONFIG, type AuditConfig } from '../../core/audit/rules.js';
import notesPlugin from '../fixtures/plugins/notes.js';
import type { Clock } from '../../core/clock.js';
import type { IsolationLimits } from '../../core/plugins/isolation/isolated-backend.js';
import type { UserLockoutStanzas } from '../../core/auth/lockout/settings.js';
import { TestClient } from './http.js';
import { startWorkersTestServer, testWorkers } from './workers-server.js';
import type { LogTap } from '../../core/log-tap.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '../../core/http/json-limits.js';

export interface TestServerOptions {
  /** A LevelDB directory; in-memory storage when omitted. */
  readonly leveldbPath?: string;
  readonly plugins?: readonly unknown[];
  readonly pluginDirectory?: string;
  readonly maxRequestSize?: number;
  /** The listener's `max_json_*` and `max_request_json_strings`; unset ones keep their defaults. */
  readonly jsonLimits?: Partial<JsonLimits>;
  /** The listener's `max_request_duration`, milliseconds. */
  readonly maxRequestDurationMs?: number;
  readonly periodicIntervalMs?: number;
  readonly clock?: Clock;
  /** Limits of external plugins' workers. */
  readonly isolation?: IsolationLimits;
  /** Serve the web UI (`ui = true`). */
  readonly ui?: boolean;
  /**
   * Audit settings of the configuration file; unset ones keep their secure default. Tests that
   * enable devices through the API say `{ unsafeAllowApiAuditCreation: true }` here.
   */
  readonly audit?: Partial<AuditConfig>;
  /** The server's log (silent when omitted). */
  readonly logger?: Logger;
  /** The tap `logger` writes through, for sys/monitor (core/log-tap.ts). */
  readonly logTap?: LogTap;
  /** The configuration file's `user_lockout` stanzas. */
  readonly userLockout?: UserLockoutStanzas;
}

/** What tests that enable audit devices through `sys/audit` give the server, as an operator would. */
export const API_AUDIT: Partial<AuditConfig> = { unsafeAllowApiAuditCreation: true };

/** A clock tests move by hand, so expiry needs no sleeping. */
export class ManualClock implements Clock {
  private current = Date.now();
  now(): Date {
    return new Date(this.current);
  }
  advance(seconds: number): void {
    this.current += seconds * 1000;
  }
}

export function testConfig(options: TestServerOptions = {}): ServerConfig {
  return {
    listeners: [
      {
        address: '127.0.0.1:0',
        maxRequestSize: options.maxRequestSize ?? 32 * 1024 * 1024,
        ...(options.jsonLimits ? { jsonLimits: { ...DEFAULT_JSON_LIMITS, ...options.jsonLimits } } : {}),
        ...(options.maxRequestDurationMs !== undefined ? { maxRequestDurationMs: options.maxRequestDurationMs } : {}),
      },
    ],
    storage: options.leveldbPath ? { kind: 'leveldb', path: options.leveldbPath } : { kind: 'inmem' },
    defaultLeaseTtl: 768 * 3600,
    maxLeaseTtl: 768 * 3600,
    logLevel: 'error',
    periodicIntervalMs: options.periodicIntervalMs ?? 0,
    ...(options.pluginDirectory ? { pluginDirectory: options.pluginDirectory } : {}),
    ...(options.ui ? { ui: true } : {}),
    ...(options.audit ? { audit: { ...DEFAULT_AUDIT_CONFIG, ...options.audit } } : {}),
    ...(options.userLockout ? { userLockout: options.userLockout } : {}),
  };
}

export async function startTestServer(options: TestServerOptions = {}): Promise<RunningServer & { client: TestClient; config: ServerConfig }> {
  const config = testConfig(options);
  const workers = testWorkers();
  if (workers !== undefined) return startWorkersTestServer(workers, options, config);
  const server = await startServer({
    config,
    plugins: options.plugins ?? [notesPlugin],
    logger: options.logger ?? pino({ level: 'silent' }),
    ...(options.logTap ? { logTap: options.logTap } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.isolation ? { isolation: options.isolation } : {}),
  });
  return Object.assign(server, { client: new TestClient(server.address), config });
}

/**
 * Gives `server` the audit settings it started with, changed by `audit`, as SIGHUP applies a
 * changed configuration file (without the rest of a reload, which would also set the configured
 * log level on the silent test logger): collectors listen on random ports, so the allowlist is
 * known only once they do.
 */
export async function reloadAudit(server: RunningServer & { config: ServerConfig }, audit: Partial<AuditConfig>): Promise<void> {
  await server.host.reconfigureAudit({ ...(server.config.audit ?? DEFAULT_AUDIT_CONFIG), ...audit });
}

/** Starts a server, initializes it with one share and unseals it; the client carries the root token. */
export async function startUnsealedServer(options: TestServerOptions = {}): Promise<RunningServer & { client: TestClient; config: ServerConfig; rootToken: string }> {
  const server = await startTestServer(options);
  const init = await server.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
  if (init.status !== 200) throw new Error(`init failed: ${init.text}`);
  const unseal = await server.client.put('sys/unseal', { key: init.body.keys[0] });
  if (unseal.status !== 200 || unseal.body.sealed) throw new Error(`unseal failed: ${unseal.text}`);
  server.client.token = init.body.root_token as string;
  return Object.assign(server, { rootToken: init.body.root_token as string });
}

/**
 * Initializes a started server with `shares` shares and `threshold`, and unseals it with the first
 * `threshold`; the client carries the root token. Keys are hex, as `sys/init` answers them.
 */
export async function initAndUnseal(server: { client: TestClient }, shares: number, threshold: number): Promise<{ keys: string[]; rootToken: string }> {
  const init = await server.client.put('sys/init', { secret_shares: shares, secret_threshold: threshold });
  if (init.status !== 200) throw new Error(`init failed: ${init.text}`);
  const keys = init.body.keys as string[];
  for (const key of keys.slice(0, threshold)) await server.client.put('sys/unseal', { key });
  const status = await server.client.get('sys/seal-status');
  if (status.body.sealed) throw new Error(`unseal failed: ${status.text}`);
  server.client.token = init.body.root_token as string;
  return { keys, rootToken: init.body.root_token as string };
}

export async function tempDir(prefix = 'keywarden-test-'): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
