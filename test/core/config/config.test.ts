import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig, parseConfig, splitAddress } from '../../../core/config/config.js';

const BASE = path.resolve('/etc/keywarden');
const HOURS_768 = 768 * 3600;

/** The smallest config that starts: in-memory storage, plain HTTP. */
const minimal = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  storage: { inmem: {} },
  listener: { tcp: { tls_disable: true } },
  ...extra,
});

/** The ConfigError message for a document, or a failure when it is accepted. */
function refusal(doc: unknown): string {
  try {
    parseConfig(doc, BASE);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  expect.fail(`expected ${JSON.stringify(doc)} to be refused`);
}

/** `(configuration):N: key: problem` for an inline document: the key and problem, the line any. */
const inline = (key: string, problem: string) => new RegExp(`^\\(configuration\\):\\d+: ${key.replace(/\./g, '\\.')}: ${problem}`);

describe('server configuration', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kw-config-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `text` to `name` under the test directory and returns its path. */
  function write(name: string, text: string): string {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  }

  function loadRefusal(paths: string | string[]): string {
    try {
      loadConfig(paths);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as Error).message;
    }
    expect.fail(`expected ${String(paths)} to be refused`);
  }

  describe('defaults', () => {
    it('fills in the request size, TTLs, log level and timer', () => {
      const config = parseConfig(minimal(), BASE);
      expect(config.listeners).to.deep.equal([{ address: '127.0.0.1:8200', maxRequestSize: 32 * 1024 * 1024 }]);
      expect(config.storage).to.deep.equal({ kind: 'inmem' });
      expect([config.defaultLeaseTtl, config.maxLeaseTtl]).to.deep.equal([HOURS_768, HOURS_768]);
      expect(config.logLevel).to.equal('info');
      expect(config.periodicIntervalMs).to.equal(60_000);
      expect(config).not.to.have.any.keys('apiAddr', 'pluginDirectory', 'clusterName', 'cloudAuth');
    });

    it('reads a max_request_size of 0 as the 32 MiB default and keeps any other value, numbers in strings too', () => {
      const size = (max_request_size: unknown) => parseConfig(minimal({ listener: { tcp: { tls_disable: true, max_request_size } } }), BASE).listeners[0]!.maxRequestSize;
      expect([size(0), size(1024), size(-1), size('2048')]).to.deep.equal([32 * 1024 * 1024, 1024, -1, 2048]);
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, max_request_size: '32MB' } } }))).to.match(
        inline('listener.tcp.max_request_size', 'expected a whole number, got a string'),
      );
    });

    it('reads the JSON limits with Vault\'s and OpenBao\'s names, 0 as the default, the rest left to their defaults', () => {
      const limits = (tcp: Record<string, unknown>) => parseConfig(minimal({ listener: { tcp: { tls_disable: true, ...tcp } } }), BASE).listeners[0]!.jsonLimits;
      expect(limits({})).to.equal(undefined);
      expect(limits({ max_json_depth: 50, max_json_string_value_length: '33554432', max_json_object_entry_count: 0, max_json_array_element_count: 100_000, max_request_json_strings: -1 })).to.deep.equal({
        depth: 50,
        stringLength: 32 * 1024 * 1024,
        objectEntries: 10_000,
        arrayElements: 100_000,
        strings: -1,
      });
      expect(limits({ max_request_json_strings: 0 })).to.deep.equal({ depth: 500, stringLength: 1024 * 1024, objectEntries: 10_000, arrayElements: 10_000, strings: 100_000 });
    });

    it('refuses a negative JSON limit of Vault\'s: those cannot be turned off', () => {
      for (const key of ['max_json_depth', 'max_json_string_value_length', 'max_json_object_entry_count', 'max_json_array_element_count']) {
        expect(refusal(minimal({ listener: { tcp: { tls_disable: true, [key]: -1 } } }))).to.match(inline(`listener.tcp.${key}`, `${key} cannot be negative`));
      }
    });

    it('reads max_request_duration as a duration, 0 as the default, and refuses a negative one', () => {
      const duration = (max_request_duration: unknown) => parseConfig(minimal({ listener: { tcp: { tls_disable: true, max_request_duration } } }), BASE).listeners[0]!.maxRequestDurationMs;
      expect([duration('2m'), duration(30), duration(0), duration('0s')]).to.deep.equal([120_000, 30_000, undefined, undefined]);
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, max_request_duration: '-5s' } } }))).to.match(inline('listener.tcp.max_request_duration', ''));
    });

    it('requires a listener block', () => {
      expect(refusal({ storage: { inmem: {} } })).to.equal('(configuration): listener: a listener "tcp" { … } block is required');
    });
  });

  describe('TLS', () => {
    const tcp = (block: Record<string, unknown>) => parseConfig({ storage: { inmem: {} }, listener: { tcp: block } }, BASE).listeners[0]!;

    it('is required unless tls_disable is set', () => {
      const problem = 'tls_cert_file and tls_key_file are required unless tls_disable is true';
      expect(refusal({ storage: { inmem: {} }, listener: { tcp: { address: '0.0.0.0:8200' } } })).to.match(inline('listener.tcp', problem));
      expect(refusal({ storage: { inmem: {} }, listener: { tcp: { tls_disable: 'false' } } })).to.match(inline('listener.tcp', problem));
      expect(refusal({ storage: { inmem: {} }, listener: { tcp: { tls_cert_file: 'cert.pem' } } })).to.match(inline('listener.tcp', problem));
    });

    it('takes the certificate and key relative to the config file\'s directory, TLS 1.2 and up, and requests client certificates as Vault does', () => {
      expect(tcp({ tls_cert_file: 'tls/cert.pem', tls_key_file: '/abs/key.pem' }).tls).to.deep.equal({
        certFile: path.join(BASE, 'tls/cert.pem'),
        keyFile: path.resolve('/abs/key.pem'),
        minVersion: 'TLSv1.2',
        clientCertificates: 'request',
      });
    });

    it('reads tls_disable the way Vault does: a boolean, 0 or 1, or a Go ParseBool word', () => {
      const disabled = (tls_disable: unknown) => tcp({ tls_disable, tls_cert_file: 'c', tls_key_file: 'k' }).tls === undefined;
      for (const yes of [true, 1, 'true', '1', 'True', 'TRUE', 't']) expect(disabled(yes), String(yes)).to.equal(true);
      for (const no of [false, 0, 'false', '0', 'False', 'f']) expect(disabled(no), String(no)).to.equal(false);
    });

    it('refuses any other tls_disable value, naming the key', () => {
      for (const value of ['yes', 2, null, []]) {
        expect(refusal(minimal({ listener: { tcp: { tls_disable: value } } })), String(value)).to.match(inline('listener.tcp.tls_disable', 'expected '));
      }
    });

    it('takes tls_min_version tls12 or tls13 and refuses TLS 1.0 and 1.1 with the reason', () => {
      const files = { tls_cert_file: 'c', tls_key_file: 'k' };
      expect(tcp({ ...files, tls_min_version: 'tls13' }).tls!.minVersion).to.equal('TLSv1.3');
      expect(tcp({ ...files, tls_min_version: 'tls12' }).tls!.minVersion).to.equal('TLSv1.2');
      for (const old of ['tls10', 'tls11']) {
        expect(refusal(minimal({ listener: { tcp: { ...files, tls_min_version: old } } }))).to.match(
          inline('listener.tcp.tls_min_version', `"${old}" is not accepted: TLS 1.0 and 1.1 are deprecated \\(RFC 8996\\)`),
        );
      }
      expect(refusal(minimal({ listener: { tcp: { ...files, tls_min_version: 'TLSv1.3' } } }))).to.match(
        inline('listener.tcp.tls_min_version', 'expected "tls12" or "tls13", got "TLSv1.3"'),
      );
    });

    it('requires and verifies client certificates against tls_client_ca_file with tls_require_and_verify_client_cert', () => {
      const tls = tcp({ tls_cert_file: 'c', tls_key_file: 'k', tls_client_ca_file: 'ca.pem', tls_require_and_verify_client_cert: 'true' }).tls!;
      expect(tls).to.include({ clientCertificates: 'require', clientCaFile: path.join(BASE, 'ca.pem') });
      expect(tcp({ tls_cert_file: 'c', tls_key_file: 'k', tls_require_and_verify_client_cert: true }).tls).to.include({ clientCertificates: 'require' });
    });

    it('stops asking for client certificates with tls_disable_client_certs', () => {
      expect(tcp({ tls_cert_file: 'c', tls_key_file: 'k', tls_disable_client_certs: true }).tls!.clientCertificates).to.equal('none');
    });

    it('refuses contradictory or inert client certificate settings, naming the key', () => {
      const files = { tls_cert_file: 'c', tls_key_file: 'k' };
      expect(refusal(minimal({ listener: { tcp: { ...files, tls_require_and_verify_client_cert: true, tls_disable_client_certs: true } } }))).to.match(
        inline('listener.tcp.tls_disable_client_certs', 'tls_disable_client_certs and tls_require_and_verify_client_cert are mutually exclusive'),
      );
      expect(refusal(minimal({ listener: { tcp: { ...files, tls_client_ca_file: 'ca.pem' } } }))).to.match(
        inline('listener.tcp.tls_client_ca_file', 'only used with tls_require_and_verify_client_cert = true'),
      );
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, tls_require_and_verify_client_cert: true } } }))).to.match(
        inline('listener.tcp.tls_require_and_verify_client_cert', 'needs TLS, but tls_disable is true'),
      );
    });

    it('takes unauthenticated_metrics_access per listener, and refuses the telemetry keys it does not know', () => {
      expect(tcp({ tls_disable: true, telemetry: { unauthenticated_metrics_access: false } }).unauthenticatedMetricsAccess).to.equal(undefined);
      expect(tcp({ tls_disable: true, telemetry: { unauthenticated_metrics_access: true } }).unauthenticatedMetricsAccess).to.equal(true);
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, telemetry: { unauthenticated_pprof_access: true } } } }))).to.match(
        inline('listener.tcp.telemetry.unauthenticated_pprof_access', 'unknown key; expected one of unauthenticated_metrics_access'),
      );
    });
  });

  describe('listeners', () => {
    it('refuses unix sockets and unknown listener types', () => {
      expect(refusal(minimal({ listener: { unix: { address: '/run/kw.sock' } } }))).to.match(inline('listener.unix', 'unix socket listeners are not supported'));
      expect(refusal(minimal({ listener: { udp: {} } }))).to.match(inline('listener.udp', 'unknown listener type "udp"'));
    });

    it('refuses an address that is not host:port', () => {
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, address: 'localhost' } } }))).to.match(
        inline('listener.tcp.address', 'must be host:port, got "localhost"'),
      );
    });

    it('takes several listener blocks in JSON as a list, as HCL\'s JSON form repeats blocks', () => {
      const config = parseConfig(
        { storage: { inmem: {} }, listener: [{ tcp: { tls_disable: true, address: '127.0.0.1:8200' } }, { tcp: { tls_disable: true, address: '127.0.0.1:8300' } }] },
        BASE,
      );
      expect(config.listeners.map((l) => l.address)).to.deep.equal(['127.0.0.1:8200', '127.0.0.1:8300']);
    });
  });

  describe('storage', () => {
    it('resolves a relative leveldb path against the config file\'s directory', () => {
      expect(parseConfig(minimal({ storage: { leveldb: { path: 'data' } } }), BASE).storage).to.deep.equal({ kind: 'leveldb', path: path.join(BASE, 'data') });
      expect(parseConfig(minimal({ storage: { leveldb: { path: '/var/lib/kw' } } }), BASE).storage).to.deep.equal({ kind: 'leveldb', path: path.resolve('/var/lib/kw') });
    });

    it('is required', () => {
      expect(refusal({ listener: { tcp: { tls_disable: true } } })).to.equal(
        '(configuration): storage: a storage "leveldb" (with path), "postgresql" (with connection_url) or "inmem" block is required',
      );
    });

    it('takes exactly one backend', () => {
      expect(refusal(minimal({ storage: {} }))).to.match(inline('storage', 'expected a labeled block such as storage "leveldb"'));
      expect(refusal(minimal({ storage: { inmem: {}, leveldb: { path: 'd' } } }))).to.match(inline('storage.leveldb', 'only one storage backend is permitted'));
    });

    it('refuses an unknown backend, a leveldb block without a path and keys a backend does not take, naming them', () => {
      expect(refusal(minimal({ storage: { raft: { path: 'd' } } }))).to.match(inline('storage.raft', 'unknown storage backend "raft"'));
      expect(refusal(minimal({ storage: { leveldb: {} } }))).to.match(inline('storage.leveldb', 'path is required'));
      expect(refusal(minimal({ storage: { leveldb: { path: '' } } }))).to.match(inline('storage.leveldb.path', 'must not be empty'));
      expect(refusal(minimal({ storage: { inmem: { path: 'x' } } }))).to.match(inline('storage.inmem.path', 'unknown key; this block takes none'));
    });

    it('refuses Vault\'s old "backend" spelling, saying to write "storage"', () => {
      expect(refusal({ listener: { tcp: { tls_disable: true } }, backend: { inmem: {} } })).to.match(inline('backend', 'not supported: this is Vault\'s old name for the storage block'));
    });
  });

  describe('postgresql storage', () => {
    const pg = (block: Record<string, unknown>, extra: Record<string, unknown> = {}) => minimal({ storage: { postgresql: block }, ...extra });
    const URL_ = 'postgres://kw:secret@db:5432/kw';

    it('reads the connection URL, table, HA switch and pool size, with defaults', () => {
      expect(parseConfig(pg({ connection_url: URL_ }), BASE).storage).to.deep.equal({
        kind: 'postgresql', connectionUrl: URL_, table: 'keywarden_store', haEnabled: false, maxParallel: 10,
      });
      const config = parseConfig(pg({ connection_url: URL_, table: 'kw_prod', ha_enabled: 'true', max_parallel: '20' }, { api_addr: 'https://10.0.0.5:8200/' }), BASE);
      expect(config.storage).to.deep.equal({ kind: 'postgresql', connectionUrl: URL_, table: 'kw_prod', haEnabled: true, maxParallel: 20 });
      expect(config.apiAddr).to.equal('https://10.0.0.5:8200');
    });

    it('needs an api_addr URL with ha_enabled: standbys forward requests there', () => {
      expect(refusal(pg({ connection_url: URL_, ha_enabled: true }))).to.match(inline('storage', 'ha_enabled needs api_addr'));
      expect(refusal(pg({ connection_url: URL_, ha_enabled: true }, { api_addr: '10.0.0.5:8200' }))).to.match(inline('api_addr', 'must be a URL like'));
    });

    it('refuses an odd table name, a pool size out of range and a URL of another scheme without echoing the URL (it may hold a password)', () => {
      expect(refusal(pg({ connection_url: URL_, table: 'Store; DROP' }))).to.match(inline('storage.postgresql.table', '"Store; DROP" is not a plain table name'));
      expect(refusal(pg({ connection_url: URL_, max_parallel: 0 }))).to.match(inline('storage.postgresql.max_parallel', 'expected 1 to 1000 connections, got 0'));
      const message = refusal(pg({ connection_url: 'mysql://kw:hunter2@db/kw' }));
      expect(message).to.match(inline('storage.postgresql.connection_url', 'must be a URL starting with postgres'));
      expect(message).to.not.include('hunter2');
      expect(refusal(pg({}))).to.match(inline('storage.postgresql', 'connection_url is required'));
    });
  });

  describe('lease TTLs', () => {
    it('reads durations as Go-style strings or seconds', () => {
      const config = parseConfig(minimal({ default_lease_ttl: '1h', max_lease_ttl: 86400 }), BASE);
      expect([config.defaultLeaseTtl, config.maxLeaseTtl]).to.deep.equal([3600, 86400]);
    });

    it('reads "" and 0 as the 768h default, as Vault does', () => {
      for (const unset of ['', 0, '0s']) {
        const config = parseConfig(minimal({ default_lease_ttl: unset, max_lease_ttl: unset }), BASE);
        expect([config.defaultLeaseTtl, config.maxLeaseTtl], JSON.stringify(unset)).to.deep.equal([HOURS_768, HOURS_768]);
      }
    });

    it('refuses a default above the maximum, naming the key that makes it so', () => {
      expect(refusal(minimal({ default_lease_ttl: '2h', max_lease_ttl: '1h' }))).to.match(inline('default_lease_ttl', '7200s is greater than max_lease_ttl \\(3600s\\)'));
      expect(refusal(minimal({ default_lease_ttl: '1000h' }))).to.match(inline('default_lease_ttl', '3600000s is greater than max_lease_ttl'));
      expect(refusal(minimal({ max_lease_ttl: '1h' }))).to.match(inline('max_lease_ttl', '3600s is less than the default lease TTL'));
    });

    it('refuses a value that is not a duration, naming the key', () => {
      expect(refusal(minimal({ default_lease_ttl: 'forever' }))).to.match(inline('default_lease_ttl', 'expected a duration'));
      expect(refusal(minimal({ max_lease_ttl: '-1h' }))).to.match(inline('max_lease_ttl', 'expected a duration'));
      expect(refusal(minimal({ max_lease_ttl: -5 }))).to.match(inline('max_lease_ttl', 'expected a non-negative duration'));
      expect(refusal(minimal({ default_lease_ttl: 1.5 }))).to.match(inline('default_lease_ttl', 'expected a duration such as "30s" or a whole number of seconds'));
    });
  });

  describe('other keys', () => {
    it('takes api_addr, cluster_name, log_level and a plugin directory relative to the config file', () => {
      const config = parseConfig(minimal({ api_addr: 'https://kw.example:8200', cluster_name: 'prod', log_level: 'debug', plugin_directory: 'plugins' }), BASE);
      expect(config).to.include({ apiAddr: 'https://kw.example:8200', clusterName: 'prod', logLevel: 'debug', pluginDirectory: path.join(BASE, 'plugins') });
    });

    it('takes the limits of external plugins\' processes, and refuses ones too small to run', () => {
      const config = parseConfig(minimal({ plugin_memory_limit_mb: 64, plugin_resident_memory_limit_mb: 200, plugin_watchdog_timeout: '2s' }), BASE);
      expect(config).to.include({ pluginMemoryLimitMb: 64, pluginResidentMemoryLimitMb: 200, pluginWatchdogMs: 2000 });
      expect(() => parseConfig(minimal({ plugin_memory_limit_mb: 8 }), BASE)).to.throw(ConfigError, 'plugin_memory_limit_mb: must be at least 16 (MB), got 8');
      expect(() => parseConfig(minimal({ plugin_resident_memory_limit_mb: 32 }), BASE)).to.throw(ConfigError, 'plugin_resident_memory_limit_mb: must be at least 64 (MB), got 32');
      expect(() => parseConfig(minimal({ plugin_watchdog_timeout: '10ms' }), BASE)).to.throw(ConfigError, 'plugin_watchdog_timeout: must be at least 100ms');
    });

    it('takes pid_file relative to the config file, and refuses an empty one', () => {
      expect(parseConfig(minimal({ pid_file: 'run/keywarden.pid' }), BASE).pidFile).to.equal(path.join(BASE, 'run/keywarden.pid'));
      expect(parseConfig(minimal(), BASE)).not.to.have.property('pidFile');
      expect(refusal(minimal({ pid_file: '' }))).to.match(/pid_file: /);
    });

    it('turns the unauthenticated root generation off with disable_unauthed_generate_root_endpoints, the same on every listener', () => {
      const listener = (extra: Record<string, unknown>) => ({ tcp: { address: '127.0.0.1:8200', tls_disable: true, ...extra } });
      expect(parseConfig(minimal({ listener: listener({ disable_unauthed_generate_root_endpoints: true }) }), BASE).disableUnauthedGenerateRoot).to.equal(true);
      expect(parseConfig(minimal(), BASE)).not.to.have.property('disableUnauthedGenerateRoot');
      const disagreeing = minimal({ listener: [listener({ disable_unauthed_generate_root_endpoints: true }), { tcp: { address: '127.0.0.1:8201', tls_disable: true } }] });
      expect(refusal(disagreeing)).to.match(/must be the same on every listener/);
    });

    it('reads Vault\'s log level names, "warning", "notice" and "err" included, in any case', () => {
      const level = (log_level: string) => parseConfig(minimal({ log_level }), BASE).logLevel;
      expect(['warning', 'notice', 'err', ' TRACE '].map(level)).to.deep.equal(['warn', 'info', 'error', 'trace']);
      expect(refusal(minimal({ log_level: 'loud' }))).to.match(inline('log_level', 'expected trace, debug, info, warn or error, got "loud"'));
    });

    it('takes log_format "json" and refuses "standard": the logger writes JSON only', () => {
      expect(() => parseConfig(minimal({ log_format: 'json' }), BASE)).not.to.throw();
      expect(refusal(minimal({ log_format: 'standard' }))).to.match(inline('log_format', 'Keywarden writes JSON logs only'));
    });

    it('takes workers, the number of serving processes, as a whole number of at least 1; unset, it is left to the flag and the core count', () => {
      expect(parseConfig(minimal({ workers: 4 }), BASE).workers).to.equal(4);
      expect(parseConfig(minimal({ workers: '1' }), BASE).workers).to.equal(1);
      expect(parseConfig(minimal(), BASE)).not.to.have.property('workers');
      expect(refusal(minimal({ workers: 0 }))).to.match(inline('workers', 'must be at least 1 \\(one serving process\\), got 0'));
      expect(refusal(minimal({ workers: -2 }))).to.match(inline('workers', 'must be at least 1'));
      expect(refusal(minimal({ workers: 1.5 }))).to.match(inline('workers', 'expected a whole number, got 1.5'));
      expect(refusal(minimal({ workers: 'all' }))).to.match(inline('workers', 'expected a whole number'));
    });

    it('reads periodic_interval in milliseconds, keeping fractions of a second', () => {
      expect(parseConfig(minimal({ periodic_interval: '250ms' }), BASE).periodicIntervalMs).to.equal(250);
      expect(parseConfig(minimal({ periodic_interval: '1m30s' }), BASE).periodicIntervalMs).to.equal(90_000);
      expect(parseConfig(minimal({ periodic_interval: 0 }), BASE).periodicIntervalMs).to.equal(0);
      expect(refusal(minimal({ periodic_interval: 'often' }))).to.match(inline('periodic_interval', 'expected a duration'));
    });

    it('takes cloud_auth with allow_sha1_signatures', () => {
      expect(parseConfig(minimal({ cloud_auth: { allow_sha1_signatures: 1 } }), BASE).cloudAuth).to.deep.equal({ allowSha1Signatures: true });
      expect(refusal(minimal({ cloud_auth: { allow_sha1: true } }))).to.match(inline('cloud_auth.allow_sha1', 'unknown key'));
    });

    it('turns the web UI on with ui = true, and leaves it off by default', () => {
      expect(parseConfig(minimal({ ui: true }), BASE).ui).to.equal(true);
      expect(parseConfig(minimal({ ui: false }), BASE).ui).to.equal(undefined);
      expect(parseConfig(minimal({}), BASE).ui).to.equal(undefined);
      expect(refusal(minimal({ ui: 'yes please' }))).to.match(inline('ui', 'expected'));
    });

    it('accepts disable_mlock (it has no effect on Node)', () => {
      expect(() => parseConfig(minimal({ disable_mlock: true, ui: false }), BASE)).not.to.throw();
    });

    it('reads the telemetry block: retention, hostname label and filter_default, with defaults', () => {
      expect(parseConfig(minimal({}), BASE).telemetry).to.equal(undefined);
      expect(parseConfig(minimal({ telemetry: {} }), BASE).telemetry).to.deep.equal({ prometheusRetentionMs: 24 * 3600 * 1000, disableHostname: false, collect: true });
      expect(parseConfig(minimal({ telemetry: { prometheus_retention_time: '30m', disable_hostname: true, filter_default: false } }), BASE).telemetry).to.deep.equal({
        prometheusRetentionMs: 30 * 60 * 1000,
        disableHostname: true,
        collect: false,
      });
      expect(parseConfig(minimal({ telemetry: { prometheus_retention_time: 0 } }), BASE).telemetry?.prometheusRetentionMs).to.equal(0);
      expect(refusal(minimal({ telemetry: { prometheus_retention_time: 'soon' } }))).to.match(/telemetry\.prometheus_retention_time: /);
    });

    it('refuses the telemetry keys of push sinks and filters, naming the key and why', () => {
      expect(refusal(minimal({ telemetry: { statsite_address: '127.0.0.1:8125' } }))).to.match(inline('telemetry.statsite_address', 'not supported: Keywarden pushes metrics nowhere'));
      expect(refusal(minimal({ telemetry: { statsd_address: '127.0.0.1:8125' } }))).to.match(inline('telemetry.statsd_address', 'not supported: Keywarden pushes metrics nowhere'));
      expect(refusal(minimal({ telemetry: { dogstatsd_addr: '127.0.0.1:8125' } }))).to.match(inline('telemetry.dogstatsd_addr', 'not supported: Keywarden pushes metrics nowhere'));
      expect(refusal(minimal({ telemetry: { circonus_api_token: 'x' } }))).to.match(inline('telemetry.circonus_api_token', 'not supported: Keywarden pushes metrics nowhere'));
      expect(refusal(minimal({ telemetry: { prefix_filter: ['-keywarden'] } }))).to.match(inline('telemetry.prefix_filter', 'not supported: metrics cannot be filtered by prefix'));
      expect(refusal(minimal({ telemetry: { usage_gauge_periodd: '10m' } }))).to.match(inline('telemetry.usage_gauge_periodd', 'unknown key; expected one of prometheus_retention_time, disable_hostname, filter_default'));
    });

    it('refuses cluster_addr: nodes talk over api_addr, there is no cluster port', () => {
      expect(refusal(minimal({ cluster_addr: 'https://10.0.0.5:8201' }))).to.match(inline('cluster_addr', 'not supported: Keywarden has no cluster port'));
    });

    it('refuses an unknown key, naming it, where it is, and the keys that are known there', () => {
      expect(refusal(minimal({ storrage: {} }))).to.match(inline('storrage', 'unknown key; expected one of listener, storage, api_addr'));
      expect(refusal(minimal({ pidfile: '/run/kw.pid' }))).to.match(inline('pidfile', 'unknown key'));
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, tls_cert: 'c' } } }))).to.match(inline('listener.tcp.tls_cert', 'unknown key; expected one of address, tls_disable'));
    });

    it('refuses a value of the wrong type, naming the key', () => {
      expect(refusal(minimal({ api_addr: 8200 }))).to.match(inline('api_addr', 'expected a string, got a number'));
      expect(refusal(minimal({ storage: 'inmem' }))).to.match(inline('storage', 'expected a block \\{ … \\}, got a string'));
    });

    it('refuses a document that is not an object', () => {
      for (const doc of [null, [], 'config', 42]) expect(refusal(doc)).to.match(/^\(configuration\):1:1: expected an object, got /);
    });
  });

  describe('HCL files', () => {
    it('reads a Vault-style HCL file', () => {
      const file = write(
        'server.hcl',
        [
          '# production',
          'storage "leveldb" {',
          '  path = "data"',
          '}',
          'listener "tcp" {',
          '  address       = "0.0.0.0:8200"',
          '  tls_cert_file = "tls/cert.pem"',
          '  tls_key_file  = "tls/key.pem"',
          '  tls_min_version = "tls13"',
          '  telemetry {',
          '    unauthenticated_metrics_access = false',
          '  }',
          '}',
          'listener "tcp" {',
          '  address     = "127.0.0.1:8201"',
          '  tls_disable = 1',
          '}',
          'api_addr          = "https://kw.example:8200"',
          'default_lease_ttl = "1h"',
          'max_lease_ttl     = "24h"',
          'log_level         = "warn"',
          'disable_mlock     = true',
          'ui                = false',
          'cloud_auth {',
          '  allow_sha1_signatures = false',
          '}',
        ].join('\n'),
      );
      const config = loadConfig(file);
      expect(config.storage).to.deep.equal({ kind: 'leveldb', path: path.join(dir, 'data') });
      expect(config.listeners).to.deep.equal([
        {
          address: '0.0.0.0:8200',
          tls: { certFile: path.join(dir, 'tls/cert.pem'), keyFile: path.join(dir, 'tls/key.pem'), minVersion: 'TLSv1.3', clientCertificates: 'request' },
          maxRequestSize: 32 * 1024 * 1024,
        },
        { address: '127.0.0.1:8201', maxRequestSize: 32 * 1024 * 1024 },
      ]);
      expect(config).to.include({ apiAddr: 'https://kw.example:8200', defaultLeaseTtl: 3600, maxLeaseTtl: 86400, logLevel: 'warn' });
      expect(config.cloudAuth).to.deep.equal({ allowSha1Signatures: false });
    });

    it('names the file, the line and the key of a refused setting', () => {
      const file = write('server.hcl', 'storage "inmem" {}\n\nlistener "tcp" {\n  tls_disable = true\n  tls_min_version = "tls10"\n}\n');
      expect(loadRefusal(file)).to.equal(`${file}:5: listener.tcp.tls_min_version: "tls10" is not accepted: TLS 1.0 and 1.1 are deprecated (RFC 8996); use "tls12" or "tls13"`);
      const typo = write('typo.hcl', 'storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nmax_lease_tll = "1h"\n');
      expect(loadRefusal(typo)).to.match(new RegExp(`^${typo.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3: max_lease_tll: unknown key`));
    });

    it('refuses a key set twice in one file, naming both lines', () => {
      const file = write('server.hcl', 'storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nlog_level = "info"\nlog_level = "debug"\n');
      expect(loadRefusal(file)).to.equal(`${file}:4: log_level: set twice in this file (first on line 3)`);
      const storage = write('two-storage.hcl', 'storage "inmem" {}\nstorage "leveldb" { path = "d" }\nlistener "tcp" { tls_disable = true }\n');
      expect(loadRefusal(storage)).to.equal(`${storage}:2: storage: set twice in this file (first on line 1)`);
    });

    it('names the file, line and column of a syntax error', () => {
      const file = write('server.hcl', 'storage "inmem" {}\nlistener "tcp" {\n  tls_disable = \n}\n');
      expect(loadRefusal(file)).to.match(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4:1: expected a value`));
    });

    it('reads a .json file as JSON, whatever it starts with', () => {
      const file = write('server.json', '  [1]');
      expect(loadRefusal(file)).to.equal(`${file}:1:3: expected an object, got a list`);
      const good = write('good.json', JSON.stringify(minimal({ storage: { leveldb: { path: 'data' } } })));
      expect(loadConfig(good).storage).to.deep.equal({ kind: 'leveldb', path: path.join(dir, 'data') });
    });

    it('names a file it cannot read, with the reason', () => {
      const file = path.join(dir, 'missing.hcl');
      expect(loadRefusal(file)).to.equal(`cannot read config file ${file}: ENOENT`);
    });
  });

  describe('a directory of files', () => {
    it('merges its .hcl and .json files in lexical order as Vault does: listeners add up, later settings win, lease TTLs keep the larger', () => {
      write('10-storage.hcl', 'storage "inmem" {}\nlog_level = "debug"\nmax_lease_ttl = "48h"\ndefault_lease_ttl = "2h"\n');
      write('20-listener.json', JSON.stringify({ listener: { tcp: { address: '127.0.0.1:8200', tls_disable: true } }, max_lease_ttl: '24h' }));
      write('30-more.hcl', 'listener "tcp" {\n  address = "127.0.0.1:8300"\n  tls_disable = true\n}\nstorage "leveldb" { path = "data" }\nlog_level = "error"\n');
      write('notes.txt', 'not = "config"');
      write('.#30-more.hcl', 'garbage {');
      write('sub/40-ignored.hcl', 'garbage {');
      const config = loadConfig(dir);
      expect(config.listeners.map((l) => l.address)).to.deep.equal(['127.0.0.1:8200', '127.0.0.1:8300']);
      expect(config.storage).to.deep.equal({ kind: 'leveldb', path: path.join(dir, 'data') });
      expect(config.logLevel).to.equal('error');
      expect([config.defaultLeaseTtl, config.maxLeaseTtl]).to.deep.equal([7200, 48 * 3600]);
    });

    it('names the file within the directory that holds a problem', () => {
      write('a.hcl', 'storage "inmem" {}\n');
      const bad = write('b.hcl', 'listener "tcp" {\n  tls_disable = true\n  adress = "x"\n}\n');
      expect(loadRefusal(dir)).to.equal(`${bad}:3: listener.tcp.adress: unknown key; expected one of address, tls_disable, tls_cert_file, tls_key_file, tls_min_version, tls_client_ca_file, tls_require_and_verify_client_cert, tls_disable_client_certs, max_request_size, max_unauthenticated_request_size, http_read_header_timeout, http_read_timeout, http_idle_timeout, http_write_timeout, telemetry, disable_unauthed_generate_root_endpoints, max_json_depth, max_json_string_value_length, max_json_object_entry_count, max_json_array_element_count, max_request_json_strings, max_request_duration`);
    });

    it('refuses a directory without configuration files', () => {
      write('readme.md', '# nothing');
      expect(loadRefusal(dir)).to.equal(`config directory ${dir} holds no .hcl or .json file`);
    });

    it('merges several -config paths in the order given', () => {
      const first = write('one/a.hcl', 'storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nlog_level = "debug"\n');
      const second = write('two.hcl', 'log_level = "warn"\n');
      expect(loadConfig([path.dirname(first), second]).logLevel).to.equal('warn');
      expect(loadConfig([second, path.dirname(first)]).logLevel).to.equal('debug');
    });
  });

  describe('splitAddress', () => {
    it('splits host and port, including bracketed IPv6 and port 0', () => {
      expect(splitAddress('127.0.0.1:8200')).to.deep.equal({ host: '127.0.0.1', port: 8200 });
      expect(splitAddress('[::1]:8200')).to.deep.equal({ host: '::1', port: 8200 });
      expect(splitAddress('localhost:0')).to.deep.equal({ host: 'localhost', port: 0 });
    });

    it('refuses an address without a port, with a bad port or with an unbracketed IPv6 host', () => {
      for (const address of ['localhost', 'localhost:', 'localhost:http', '::1:8200', '']) {
        expect(() => splitAddress(address), address).to.throw(ConfigError, 'listener.tcp.address: must be host:port');
      }
    });

    it('refuses a port above 65535', () => {
      expect(() => splitAddress('localhost:65536')).to.throw(ConfigError, 'port 65536 is out of range');
      expect(splitAddress('localhost:65535').port).to.equal(65535);
    });
  });
});
