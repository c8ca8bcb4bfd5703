/**
 * The test server as `keywarden server -workers=N` (issue #31): with KEYWARDEN_TEST_WORKERS=N set,
 * `startTestServer` (test/helpers/server.ts) spawns a server of N workers on LevelDB instead of
 * starting one in this process, and returns a client of the same shape. The test client opens a
 * connection per request, so the requests of one test reach the workers in turn, as an operator's
 * clients do. A suite that reaches into the in-process server (its host, its reload), or asks for
 * what a configuration file cannot say (a clock, a logger, plugins compiled into the test), is
 * refused by name: it runs on the in-process server only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { ServerConfig } from '../../core/config/config.js';
import type { RunningServer } from '../../core/server.js';
import notesPlugin from '../fixtures/plugins/notes.js';
import { TestClient } from './http.js';
import type { TestServerOptions } from './server.js';
import { startWorkers } from './workers.js';

/** The workers of the test server: KEYWARDEN_TEST_WORKERS, or undefined to start it in this process. */
export function testWorkers(): number | undefined {
  const value = process.env['KEYWARDEN_TEST_WORKERS'];
  if (value === undefined || value === '') return undefined;
  const workers = Number(value);
  if (!Number.isSafeInteger(workers) || workers < 1) throw new Error(`KEYWARDEN_TEST_WORKERS: expected a whole number of at least 1, got "${value}"`);
  return workers;
}

/** Options a configuration file cannot carry: a suite that sets them runs in process only. */
const IN_PROCESS_ONLY = ['jsonLimits', 'clock', 'isolation', 'logger', 'logTap', 'userLockout'] as const;

export async function startWorkersTestServer(workers: number, options: TestServerOptions, config: ServerConfig): Promise<RunningServer & { client: TestClient; config: ServerConfig }> {
  const refused: string[] = IN_PROCESS_ONLY.filter((name) => options[name] !== undefined);
  // The built-in plugins are the spawned server's; the test fixtures are not (a suite mounting
  // `notes` fails there, by name).
  if (options.plugins?.some((plugin) => plugin !== notesPlugin)) refused.push('plugins');
  const audit = options.audit ?? {};
  // Declared devices are `audit` stanzas of the configuration file; the suites that declare them check the stanzas themselves.
  if (audit.devices !== undefined) refused.push('audit.devices');
  if (refused.length > 0) throw new Error(`KEYWARDEN_TEST_WORKERS: this suite sets ${refused.join(', ')}, which only a server in this process takes`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-test-workers-'));
  const server = await startWorkers(
    dir,
    {
      dataDir: options.leveldbPath ?? path.join(dir, 'data'),
      listener: {
        max_request_size: config.listeners[0]!.maxRequestSize,
        ...(options.maxRequestDurationMs !== undefined ? { max_request_duration: `${options.maxRequestDurationMs}ms` } : {}),
      },
      settings: {
        default_lease_ttl: `${config.defaultLeaseTtl}s`,
        max_lease_ttl: `${config.maxLeaseTtl}s`,
        // As in process: periodic work runs only when a test asks for it.
        periodic_interval: `${config.periodicIntervalMs}ms`,
        ...(config.pluginDirectory ? { plugin_directory: config.pluginDirectory } : {}),
        ...(config.ui ? { ui: true } : {}),
        ...(audit.unsafeAllowApiAuditCreation ? { unsafe_allow_api_audit_creation: true } : {}),
        ...(audit.allowAuditLogPrefixing ? { allow_audit_log_prefixing: true } : {}),
        ...(audit.apiAuditSocketAllowlist ? { api_audit_socket_allowlist: audit.apiAuditSocketAllowlist } : {}),
      },
    },
    workers,
  );
  const inProcessOnly = (what: string) => (): never => {
    throw new Error(`KEYWARDEN_TEST_WORKERS: this suite uses the server's ${what}, which only a server in this process has`);
  };
  const running: RunningServer & { client: TestClient; config: ServerConfig } = {
    address: server.address,
    addresses: [server.address],
    logger: pino({ level: 'silent' }),
    client: new TestClient(server.address),
    config,
    reload: inProcessOnly('reload'),
    close: async () => {
      const code = await server.stop();
      await rm(dir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`the server of ${workers} workers exited with ${code}:\n${server.output()}`);
    },
    get host(): never {
      return inProcessOnly('host')();
    },
  };
  return running;
}
