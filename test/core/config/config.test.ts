import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfigFile, parseConfig, splitAddress } from '../../../core/config/config.js';

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

describe('server configuration', () => {
  describe('defaults', () => {
    it('fills in the listener address, request size, TTLs, log level and timer', () => {
      const config = parseConfig(minimal(), BASE);
      expect(config.listener).to.deep.equal({ address: '127.0.0.1:8200', tlsDisable: true, maxRequestSize: 32 * 1024 * 1024 });
      expect(config.storage).to.deep.equal({ kind: 'inmem' });
      expect([config.defaultLeaseTtl, config.maxLeaseTtl]).to.deep.equal([HOURS_768, HOURS_768]);
      expect(config.logLevel).to.equal('info');
      expect(config.periodicIntervalMs).to.equal(60_000);
      expect(config).not.to.have.any.keys('apiAddr', 'pluginDirectory');
    });

    it('reads a max_request_size of 0 as the 32 MiB default and keeps any other value', () => {
      const size = (max_request_size: number) => parseConfig(minimal({ listener: { tcp: { tls_disable: true, max_request_size } } }), BASE).listener.maxRequestSize;
      expect([size(0), size(1024), size(-1)]).to.deep.equal([32 * 1024 * 1024, 1024, -1]);
    });
  });

  describe('TLS', () => {
    it('is required unless tls_disable is set', () => {
      const expected = 'listener.tcp: tls_cert_file and tls_key_file are required unless tls_disable is true';
      expect(refusal({ storage: { inmem: {} } })).to.equal(expected);
      expect(refusal({ storage: { inmem: {} }, listener: { tcp: { address: '0.0.0.0:8200' } } })).to.equal(expected);
      expect(refusal({ storage: { inmem: {} }, listener: { tcp: { tls_disable: 'false' } } })).to.equal(expected);
      expect(refusal({ storage: { inmem: {} }, listener: { tcp: { tls_cert_file: 'cert.pem' } } })).to.equal(expected);
    });

    it('takes the certificate and key, relative to the config file\'s directory', () => {
      const config = parseConfig({ storage: { inmem: {} }, listener: { tcp: { tls_cert_file: 'tls/cert.pem', tls_key_file: '/abs/key.pem' } } }, BASE);
      expect(config.listener).to.include({ tlsDisable: false, tlsCertFile: path.join(BASE, 'tls/cert.pem'), tlsKeyFile: path.resolve('/abs/key.pem') });
    });

    it('reads tls_disable the way Vault does: a boolean, 0 or 1, or a Go ParseBool word', () => {
      const disabled = (tls_disable: unknown) =>
        parseConfig({ storage: { inmem: {} }, listener: { tcp: { tls_disable, tls_cert_file: 'c', tls_key_file: 'k' } } }, BASE).listener.tlsDisable;
      for (const yes of [true, 1, 'true', '1', 'True', 'TRUE', 't']) expect(disabled(yes), String(yes)).to.equal(true);
      for (const no of [false, 0, 'false', '0', 'False', 'f']) expect(disabled(no), String(no)).to.equal(false);
    });

    it('refuses any other tls_disable value, naming the key', () => {
      for (const value of ['yes', 2, null]) {
        expect(refusal(minimal({ listener: { tcp: { tls_disable: value } } })), String(value)).to.match(/^invalid configuration at listener\.tcp\.tls_disable: /);
      }
    });
  });

  describe('storage', () => {
    it('resolves a relative leveldb path against the config file\'s directory', () => {
      expect(parseConfig(minimal({ storage: { leveldb: { path: 'data' } } }), BASE).storage).to.deep.equal({ kind: 'leveldb', path: path.join(BASE, 'data') });
      expect(parseConfig(minimal({ storage: { leveldb: { path: '/var/lib/kw' } } }), BASE).storage).to.deep.equal({ kind: 'leveldb', path: path.resolve('/var/lib/kw') });
    });

    it('is required', () => {
      expect(refusal({ listener: { tcp: { tls_disable: true } } })).to.equal(
        'storage: a "leveldb" (with "path"), "postgresql" (with "connection_url") or "inmem" block is required',
      );
    });

    it('takes exactly one backend', () => {
      expect(refusal(minimal({ storage: {} }))).to.equal('invalid configuration at storage: must NOT have fewer than 1 properties');
      expect(refusal(minimal({ storage: { inmem: {}, leveldb: { path: 'd' } } }))).to.equal('invalid configuration at storage: must NOT have more than 1 properties');
    });

    it('refuses an unknown backend and a leveldb block without a path, naming them', () => {
      expect(refusal(minimal({ storage: { raft: { path: 'd' } } }))).to.equal('invalid configuration at storage: must NOT have additional properties "raft"');
      expect(refusal(minimal({ storage: { leveldb: {} } }))).to.equal("invalid configuration at storage.leveldb: must have required property 'path'");
      expect(refusal(minimal({ storage: { leveldb: { path: '' } } }))).to.match(/^invalid configuration at storage\.leveldb\.path: /);
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

    it('needs an api_addr URL with ha_enabled: standbys forward writes there', () => {
      expect(refusal(pg({ connection_url: URL_, ha_enabled: true }))).to.match(/^api_addr is required with storage\.postgresql\.ha_enabled/);
      expect(refusal(pg({ connection_url: URL_, ha_enabled: true }, { api_addr: '10.0.0.5:8200' }))).to.match(/^api_addr must be a URL/);
    });

    it('refuses an odd table name and a URL of another scheme without echoing the URL (it may hold a password)', () => {
      expect(refusal(pg({ connection_url: URL_, table: 'Store; DROP' }))).to.match(/^storage\.postgresql\.table: "Store; DROP" is not a plain table name/);
      const message = refusal(pg({ connection_url: 'mysql://kw:hunter2@db/kw' }));
      expect(message).to.match(/connection_url must be a URL starting with postgres/);
      expect(message).to.not.include('hunter2');
      expect(refusal(pg({}))).to.equal("invalid configuration at storage.postgresql: must have required property 'connection_url'");
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

    it('refuses a default above the maximum', () => {
      expect(refusal(minimal({ default_lease_ttl: '2h', max_lease_ttl: '1h' }))).to.equal('default_lease_ttl cannot be greater than max_lease_ttl');
      expect(refusal(minimal({ default_lease_ttl: '1000h' }))).to.equal('default_lease_ttl cannot be greater than max_lease_ttl');
    });

    it('refuses a value that is not a duration, naming the key', () => {
      expect(refusal(minimal({ default_lease_ttl: 'forever' }))).to.match(/^default_lease_ttl: expected a duration/);
      expect(refusal(minimal({ max_lease_ttl: '-1h' }))).to.match(/^max_lease_ttl: expected a duration/);
      expect(refusal(minimal({ max_lease_ttl: -5 }))).to.match(/^invalid configuration at max_lease_ttl: /);
      expect(refusal(minimal({ default_lease_ttl: 1.5 }))).to.match(/^invalid configuration at default_lease_ttl: /);
    });
  });

  describe('other keys', () => {
    it('takes api_addr, log_level and a plugin directory relative to the config file', () => {
      const config = parseConfig(minimal({ api_addr: 'https://kw.example:8200', log_level: 'debug', plugin_directory: 'plugins' }), BASE);
      expect(config).to.include({ apiAddr: 'https://kw.example:8200', logLevel: 'debug', pluginDirectory: path.join(BASE, 'plugins') });
    });

    it('takes pid_file relative to the config file, and refuses an empty one', () => {
      expect(parseConfig(minimal({ pid_file: 'run/keywarden.pid' }), BASE).pidFile).to.equal(path.join(BASE, 'run/keywarden.pid'));
      expect(parseConfig(minimal(), BASE)).not.to.have.property('pidFile');
      expect(refusal(minimal({ pid_file: '' }))).to.equal('invalid configuration at pid_file: must NOT have fewer than 1 characters');
    });

    it('reads log_level "warning" as "warn" and refuses unknown levels', () => {
      expect(parseConfig(minimal({ log_level: 'warning' }), BASE).logLevel).to.equal('warn');
      expect(refusal(minimal({ log_level: 'loud' }))).to.match(/^invalid configuration at log_level: must be equal to one of the allowed values/);
    });

    it('reads periodic_interval in milliseconds, keeping fractions of a second', () => {
      expect(parseConfig(minimal({ periodic_interval: '250ms' }), BASE).periodicIntervalMs).to.equal(250);
      expect(parseConfig(minimal({ periodic_interval: '1m30s' }), BASE).periodicIntervalMs).to.equal(90_000);
      expect(parseConfig(minimal({ periodic_interval: 0 }), BASE).periodicIntervalMs).to.equal(0);
      expect(refusal(minimal({ periodic_interval: 'often' }))).to.match(/^periodic_interval: /);
    });

    it('accepts Vault keys it has no use for: ui, disable_mlock, cluster_name', () => {
      expect(() => parseConfig(minimal({ ui: true, disable_mlock: true, cluster_name: 'kw' }), BASE)).not.to.throw();
    });

    it('refuses an unknown key, naming it and where it is', () => {
      expect(refusal(minimal({ storrage: {} }))).to.equal('invalid configuration at (top level): must NOT have additional properties "storrage"');
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, tls_cert: 'c' } } }))).to.equal(
        'invalid configuration at listener.tcp: must NOT have additional properties "tls_cert"',
      );
      expect(refusal(minimal({ listener: { unix: {} } }))).to.equal('invalid configuration at listener: must NOT have additional properties "unix"');
    });

    it('refuses a value of the wrong type, naming the key', () => {
      expect(refusal(minimal({ listener: { tcp: { tls_disable: true, max_request_size: '32MB' } } }))).to.equal(
        'invalid configuration at listener.tcp.max_request_size: must be integer',
      );
      expect(refusal(minimal({ api_addr: 8200 }))).to.equal('invalid configuration at api_addr: must be string');
    });

    it('refuses a document that is not an object', () => {
      for (const doc of [null, [], 'config', 42]) expect(refusal(doc)).to.match(/^invalid configuration at \(top level\): must be object/);
    });
  });

  describe('loadConfigFile', () => {
    let dir: string;

    beforeEach(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'kw-config-'));
    });

    afterEach(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    it('reads a JSON file and resolves paths against its directory', () => {
      const file = path.join(dir, 'server.json');
      writeFileSync(file, JSON.stringify(minimal({ storage: { leveldb: { path: 'data' } } })));
      expect(loadConfigFile(file).storage).to.deep.equal({ kind: 'leveldb', path: path.join(dir, 'data') });
    });

    it('names a file it cannot read, with the reason', () => {
      const file = path.join(dir, 'missing.json');
      expect(() => loadConfigFile(file)).to.throw(ConfigError, `cannot read config file ${file}: ENOENT`);
    });

    it('names a file that is not JSON', () => {
      const file = path.join(dir, 'server.hcl');
      writeFileSync(file, 'storage "inmem" {}');
      expect(() => loadConfigFile(file)).to.throw(ConfigError, `config file ${file} is not valid JSON`);
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
        expect(() => splitAddress(address), address).to.throw(ConfigError, 'listener.tcp.address must be host:port');
      }
    });

    it('refuses a port above 65535', () => {
      expect(() => splitAddress('localhost:65536')).to.throw(ConfigError, 'port 65536 is out of range');
      expect(splitAddress('localhost:65535').port).to.equal(65535);
    });
  });
});
