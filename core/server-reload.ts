/**
 * SIGHUP: what a running server applies from its configuration file again (log level, TLS
 * certificates, audit devices, audit files reopened), and the settings it names as taking effect
 * only at a restart (docs/deployment.md, "TLS certificates and their reload").
 */
import type { Logger } from 'pino';
import type { Host } from './host.js';
import type { Listener, TlsFiles } from './http/listener.js';
import type { ListenerTls, ServerConfig } from './config/config.js';
import { DEFAULT_AUDIT_CONFIG } from './audit/rules.js';
import { errorMessage } from './errors.js';

export function tlsFiles(tls: ListenerTls): TlsFiles {
  return { tlsCertFile: tls.certFile, tlsKeyFile: tls.keyFile, ...(tls.clientCaFile ? { tlsClientCaFile: tls.clientCaFile } : {}) };
}

interface Running {
  readonly config: ServerConfig;
  readonly listeners: readonly Listener[];
  readonly host: Host;
  readonly logger: Logger;
}

export async function reload(next: ServerConfig | undefined, running: Running): Promise<void> {
  const { config, listeners, host, logger } = running;
  if (next && next.logLevel !== logger.level) {
    host.logLevels.configure(next.logLevel);
    logger.info({ log_level: next.logLevel }, 'reload: log level changed');
  }
  if (next) {
    // Key names only: values may hold secrets (the PostgreSQL connection URL).
    const keys = restartOnlyChanges(config, next);
    if (keys.length > 0) logger.warn({ keys }, 'reload: these settings changed and take effect only at a restart');
  }
  // A listener block is matched to its running listener by position and address.
  const updated = next?.listeners.length === listeners.length ? next.listeners : [];
  for (const [i, listener] of listeners.entries()) {
    const current = config.listeners[i]!;
    if (!current.tls) continue;
    const tls = updated[i]?.address === current.address ? updated[i]!.tls : undefined;
    try {
      listener.reloadTls(tls ? tlsFiles(tls) : undefined);
      logger.info({ address: listener.address }, 'reload: TLS certificate and key read again');
    } catch (err) {
      logger.error({ address: listener.address, err: errorMessage(err) }, 'reload: TLS certificate not reloaded; the previous one stays in use');
    }
  }
  if (next) {
    // Before the reopen, so a device whose stanza is gone is disabled rather than reconnected.
    try {
      await host.reconfigureAudit(next.audit ?? DEFAULT_AUDIT_CONFIG);
    } catch (err) {
      logger.error({ err: errorMessage(err) }, 'reload: the audit devices of the configuration were not applied');
    }
  }
  await host.audit.reopen();
  logger.info('reload: audit files reopened');
}

/** The configuration file's names for settings SIGHUP does not apply. */
const RESTART_ONLY: Readonly<Record<Exclude<keyof ServerConfig, 'logLevel' | 'audit'>, string>> = {
  listeners: 'listener',
  storage: 'storage',
  defaultLeaseTtl: 'default_lease_ttl',
  maxLeaseTtl: 'max_lease_ttl',
  apiAddr: 'api_addr',
  clusterName: 'cluster_name',
  pluginDirectory: 'plugin_directory',
  pluginMemoryLimitMb: 'plugin_memory_limit_mb',
  pluginResidentMemoryLimitMb: 'plugin_resident_memory_limit_mb',
  pluginWatchdogMs: 'plugin_watchdog_timeout',
  pidFile: 'pid_file',
  disableUnauthedGenerateRoot: 'disable_unauthed_generate_root_endpoints',
  periodicIntervalMs: 'periodic_interval',
  cloudAuth: 'cloud_auth',
  plugins: 'plugin',
  ui: 'ui',
  telemetry: 'telemetry',
  userLockout: 'user_lockout',
  seal: 'seal',
  initialize: 'initialize',
  workers: 'workers',
};

function restartOnlyChanges(current: ServerConfig, next: ServerConfig): string[] {
  // A listener's certificate, key and client CA files are read again on SIGHUP; the rest of it is not.
  const comparable = (config: ServerConfig) => ({
    ...config,
    listeners: config.listeners.map((l) => ({ ...l, ...(l.tls ? { tls: { ...l.tls, certFile: '', keyFile: '', clientCaFile: '' } } : {}) })),
  });
  const [a, b] = [comparable(current), comparable(next)];
  return (Object.keys(RESTART_ONLY) as (keyof typeof RESTART_ONLY)[])
    .filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]))
    .map((key) => RESTART_ONLY[key]);
}
