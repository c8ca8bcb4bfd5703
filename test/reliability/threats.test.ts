/**
 * Threat checks, one test each: SSRF and header rules of the cloud login, secrets compared in
 * constant time, no secret in logs or audit files of a full run, tampered barrier entries
 * detected, a sealed server serving only the seal endpoints, slow clients cut off, the TLS
 * listener, and bodies over the limit refused before they are buffered.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig, parseConfig } from '../../core/config/config.js';
import { startServer } from '../../core/server.js';
import { MemoryStorage } from '../../storage/memory.js';
import { tempDir } from '../helpers/server.js';
import { Api, HangError, send } from './support/http.js';
import { initialize, spawnServer, unsealWith, writeConfig } from './support/child.js';
import { startReliabilityServer, type ReliabilityServer } from './support/server.js';
import { modelFromOpenApi } from './support/fuzz-model.js';
import { startCanary } from './support/canary.js';
import { guardOutboundConnections } from './support/network-guard.js';
import { cloudLoginMissing, iamLogin } from './support/cloud.js';
import { selfSignedCertificate } from './support/certs.js';
import { SealedError } from '../../core/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');

/** Reads a raw socket until it closes; resolves with what came back. */
function collect(socket: net.Socket): Promise<{ text: string; closedAt: number }> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text, closedAt: Date.now() }));
  });
}

describe('threat checks', function () {
  this.timeout(120_000);

  describe('the cloud login', () => {
    let server: ReliabilityServer | undefined;
    before(async () => {
      server = await startReliabilityServer();
      expect(cloudLoginMissing(server)).to.equal(undefined);
      await server.api.expect('POST', 'sys/auth/cloud', { type: 'cloud' });
    });
    after(() => server?.close());

    async function withProvider<T>(config: Record<string, unknown>, run: (provider: Awaited<ReturnType<typeof startCanary>>) => Promise<T>): Promise<T> {
      const provider = await startCanary('sts-error');
      const guard = guardOutboundConnections();
      try {
        await server!.api.expect('POST', 'auth/cloud/config/client', { access_key: 'AKIATHREAT', secret_key: 'threat-secret', sts_endpoint: provider.url, sts_region: 'us-east-1', max_retries: 0, ...config });
        return await run(provider);
      } finally {
        guard.restore();
        await provider.close();
      }
    }

    it('never contacts a host the client named (SSRF): the signed URL and the Host header point elsewhere, the request goes to the configured endpoint', async function () {
      const named = await startCanary('garbage');
      try {
        await withProvider({}, async (provider) => {
          for (const url of [named.url + '/', `${named.url}/?Action=GetCallerIdentity`, 'http://169.254.169.254/latest/meta-data/', 'https://attacker.example/']) {
            const res = await server!.api.request('POST', 'auth/cloud/login', iamLogin({ Host: [new URL(url).host] }, url), '');
            expect(res.status, res.text).to.be.within(400, 499);
          }
          expect(named.connections(), 'connections to the host the client named').to.equal(0);
          expect(provider.requests.length, 'requests to the configured endpoint').to.be.greaterThan(0);
        });
      } finally {
        await named.close();
      }
    });

    it('lets only the allowed X-Amz-* headers through: any other is refused before the provider is called', async function () {
      await withProvider({}, async (provider) => {
        const res = await server!.api.request('POST', 'auth/cloud/login', iamLogin({ 'X-Amz-Evil': ['1'] }), '');
        expect(res.status, res.text).to.equal(400);
        expect(res.json.errors[0]).to.contain('X-Amz-Evil');
        expect(provider.requests).to.have.length(0);
        await server!.api.expect('POST', 'auth/cloud/config/client', { allowed_sts_header_values: 'X-Amz-Evil' });
        const allowed = await server!.api.request('POST', 'auth/cloud/login', iamLogin({ 'X-Amz-Evil': ['1'] }), '');
        expect(allowed.json?.errors?.[0] ?? '', allowed.text).to.not.contain('invalid request header');
        expect(provider.requests.length).to.be.greaterThan(0);
      });
    });

    it('requires the server-id header to be present, equal and signed', async function () {
      await withProvider({ iam_server_id_header_value: 'keywarden.test' }, async (provider) => {
        const unsigned = await server!.api.request('POST', 'auth/cloud/login', iamLogin({ 'X-Service-Cloud-IAM-Server-ID': ['keywarden.test'] }), '');
        expect(unsigned.status, unsigned.text).to.equal(400);
        expect(unsigned.json.errors[0]).to.match(/signed/);
        const missing = await server!.api.request('POST', 'auth/cloud/login', iamLogin(), '');
        expect(missing.status, missing.text).to.equal(400);
        const wrong = await server!.api.request('POST', 'auth/cloud/login', iamLogin({ 'X-Service-Cloud-IAM-Server-ID': ['other.test'] }), '');
        expect(wrong.status, wrong.text).to.equal(400);
        expect(provider.requests, 'requests that reached the provider').to.have.length(0);
        const signed = await server!.api.request(
          'POST',
          'auth/cloud/login',
          iamLogin({
            'X-Service-Cloud-IAM-Server-ID': ['keywarden.test'],
            Authorization: ['AWS4-HMAC-SHA256 Credential=AKIACLIENT/20240101/us-east-1/sts/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-service-cloud-iam-server-id, Signature=00'],
          }),
          '',
        );
        expect(signed.json?.errors?.[0] ?? '', signed.text).to.not.match(/server.id|signed/i);
        expect(provider.requests.length, 'a signed header passes on to the provider').to.equal(1);
      });
    });
  });

  it('compares secrets in constant time: token hashes, unseal shares and transit HMACs use timingSafeEqual, and no other secret is compared with === or !==', async () => {
    const required: [string, string][] = [
      ['core/auth/token-records.ts', 'token hashes'],
      ['core/seal/shares.ts', 'unseal share digests'],
      ['core/seal/nonce.ts', 'rekey and root generation nonces'],
      ['plugins/transit/crypto/hmac.ts', 'HMAC verification'],
    ];
    for (const [file, what] of required) {
      expect(await readFile(path.join(ROOT, file), 'utf8'), `${file} (${what})`).to.contain('timingSafeEqual(');
    }
    // Comparisons with === or !== where an operand is named like a secret and neither is a literal.
    const allowed = new Map([
      ['plugins/transit/crypto/csr.ts', 'actual !== expected'], // key algorithm names, public
      ['plugins/cloud-auth/iam-request.ts', 'provided !== required'], // the server-id header value: sent in every signed login, not a secret (Vault compares it so too)
      ['plugins/cloud-auth/pkcs7.ts', 'algorithm.hash !== digest'], // hash algorithm names of a signature, public
      ['plugins/approle/paths/role.ts', 'input.local_secret_ids !== role.local_secret_ids'], // a boolean setting of the role, not a secret
    ]);
    const comparison = /([\w.[\]()!?]+)\s*(===|!==)\s*([\w.[\]()'"`-]+)/g;
    const literal = /^(['"`]|-?\d|undefined$|null$|true$|false$|NaN$)/;
    const secretName = /(hmac|\bmac\b|digest|signature|secret|share|password|expected|provided)/i;
    const harmless = /\.(length|size|type|kind|name|byteLength|tagClass|status|version|term|method|operation)\)?$/;
    const offenders: string[] = [];
    for (const top of ['core', 'storage', 'plugins']) {
      for (const file of await sourceFiles(path.join(ROOT, top))) {
        const relative = path.relative(ROOT, file);
        (await readFile(file, 'utf8')).split('\n').forEach((line, i) => {
          if (/^\s*(\*|\/\/)/.test(line)) return;
          for (const m of line.matchAll(comparison)) {
            const a = m[1]!.replace(/^[(!]+/, '');
            const b = m[3]!.replace(/\)+$/, '');
            if (literal.test(a) || literal.test(b) || harmless.test(a) || harmless.test(b)) continue;
            if (!secretName.test(a) && !secretName.test(b)) continue;
            if (allowed.get(relative) === `${a} ${m[2]} ${b}`) continue;
            offenders.push(`${relative}:${i + 1}: ${line.trim()}`);
          }
        });
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('keeps root and client tokens, unseal keys, plaintexts and key material out of the logs and the audit file of a full run', async function () {
    this.timeout(180_000);
    const dir = await tempDir('keywarden-threat-logs-');
    try {
      const configFile = await writeConfig(dir.path, { dataDir: path.join(dir.path, 'data'), logLevel: 'trace', settings: { unsafe_allow_api_audit_creation: true } });
      const proc = await spawnServer(configFile, dir.path);
      const secrets: Record<string, string> = {};
      try {
        const api = new Api(proc.address);
        const init = await initialize(api, 3, 2);
        init.keys.forEach((k, i) => (secrets[`unseal share ${i} (hex)`] = k));
        init.keysBase64.forEach((k, i) => (secrets[`unseal share ${i} (base64)`] = k));
        secrets['root token'] = init.rootToken;
        await unsealWith(api, init.keys.slice(0, 2));
        api.token = init.rootToken;
        const auditFile = path.join(dir.path, 'audit.log');
        await api.expect('POST', 'sys/audit/file', { type: 'file', options: { file_path: auditFile } });

        // Tokens: a client token used, looked up by value, renewed and revoked; a failed use of a revoked one.
        await api.expect('POST', 'sys/policies/acl/app', { policy: 'path "crypto/*" { capabilities = ["create", "read", "update", "list"] }' });
        const client = (await api.expect('POST', 'auth/token/create', { policies: ['app'], ttl: '1h' }, [200])).json.auth.client_token as string;
        secrets['client token'] = client;
        await api.expect('POST', 'auth/token/lookup', { token: client }, [200]);
        await api.expect('POST', 'auth/token/renew', { token: client, increment: '2h' }, [200]);
        const other = (await api.expect('POST', 'auth/token/create', { policies: ['app'] }, [200])).json.auth.client_token as string;
        secrets['revoked client token'] = other;
        await api.expect('POST', 'auth/token/revoke', { token: other });
        await api.request('GET', 'auth/token/lookup-self', undefined, other);

        // Transit: plaintexts, data keys, exported keys, a backup, HMACs, random bytes.
        await api.expect('POST', 'sys/mounts/crypto', { type: 'transit' });
        await api.expect('POST', 'crypto/keys/orders', { type: 'aes256-gcm96', exportable: true, allow_plaintext_backup: true });
        const plaintext = randomBytes(24).toString('hex');
        secrets['plaintext (raw)'] = plaintext;
        secrets['plaintext (base64)'] = b64(plaintext);
        const encrypted = await api.request('POST', 'crypto/encrypt/orders', { plaintext: b64(plaintext) }, client);
        expect(encrypted.status, encrypted.text).to.equal(200);
        const decrypted = await api.request('POST', 'crypto/decrypt/orders', { ciphertext: encrypted.json.data.ciphertext }, client);
        expect(decrypted.json.data.plaintext).to.equal(b64(plaintext));
        const batch = Array.from({ length: 3 }, () => randomBytes(18).toString('hex'));
        batch.forEach((p, i) => (secrets[`batch plaintext ${i}`] = b64(p)));
        await api.expect('POST', 'crypto/encrypt/orders', { batch_input: batch.map((p) => ({ plaintext: b64(p) })) }, [200]);
        await api.request('POST', 'crypto/encrypt/orders', { plaintext: `${b64(plaintext)}!!not-base64` }, client);
        const datakey = await api.expect('POST', 'crypto/datakey/plaintext/orders', {}, [200]);
        secrets['data key'] = datakey.json.data.plaintext as string;
        const exported = await api.request('GET', 'crypto/export/encryption-key/orders');
        if (exported.status === 200) secrets['exported key'] = Object.values(exported.json.data.keys as Record<string, string>)[0]!;
        const backup = await api.request('GET', 'crypto/backup/orders');
        if (backup.status === 200) secrets['backup blob'] = (backup.json.data.backup as string).slice(0, 64);
        await api.expect('POST', 'crypto/keys/signer', { type: 'ed25519', exportable: true });
        const signingKey = await api.request('GET', 'crypto/export/signing-key/signer');
        if (signingKey.status === 200) secrets['exported signing key'] = Object.values(signingKey.json.data.keys as Record<string, string>)[0]!;
        await api.expect('POST', 'crypto/hmac/orders', { input: b64(plaintext) }, [200]);
        const random = await api.request('POST', 'crypto/random/32', {});
        if (random.status === 200) secrets['random bytes'] = random.json.data.random_bytes as string;

        // Seal and unseal with the other shares, so the seal path is logged too.
        await api.expect('PUT', 'sys/seal', {});
        await unsealWith(api, init.keys.slice(1));
      } finally {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
      const logs = proc.output();
      const audit = await readFile(path.join(dir.path, 'audit.log'), 'utf8');
      expect(audit.split('\n').length, 'audit lines').to.be.greaterThan(20);
      expect(logs.split('\n').length, 'log lines').to.be.greaterThan(5);
      const found: string[] = [];
      for (const [what, secret] of Object.entries(secrets)) {
        if (logs.includes(secret)) found.push(`${what} in the server log`);
        if (audit.includes(secret)) found.push(`${what} in the audit file`);
      }
      expect(found).to.deep.equal([]);
      console.log(`      checked ${Object.keys(secrets).length} secrets against ${logs.split('\n').length} log lines and ${audit.split('\n').length} audit lines`);
    } finally {
      await dir.remove();
    }
  });

  it('detects a tampered barrier entry and a value moved to another path: refused, never served', async () => {
    const physical = new MemoryStorage();
    const server = await startReliabilityServer({ physical });
    try {
      const api = server.api;
      await api.expect('POST', 'sys/mounts/crypto', { type: 'transit' });
      await api.expect('POST', 'crypto/keys/a', {});
      await api.expect('POST', 'crypto/keys/b', {});
      const uuid = (await api.expect('GET', 'sys/mounts/crypto', undefined, [200])).json.data.uuid as string;
      const keyA = `logical/${uuid}/policy/a`;
      const keyB = `logical/${uuid}/policy/b`;
      const original = (await physical.get(keyA))!;
      expect(original, 'stored entry of key a').to.not.equal(undefined);

      const reload = () => api.expect('POST', 'sys/plugins/reload/backend', { mounts: ['crypto'] });
      const flipped = Uint8Array.from(original);
      flipped[flipped.length - 20]! ^= 0x01;
      await physical.put(keyA, flipped);
      await reload();
      const tampered = await api.get('crypto/keys/a');
      expect(tampered.status, tampered.text).to.be.within(500, 599);
      expect(tampered.json.errors).to.deep.equal(['internal error']);

      // A valid ciphertext moved to another path fails too: the path is the AAD.
      await physical.put(keyA, original);
      await physical.put(keyB, original);
      await reload();
      expect((await api.get('crypto/keys/a')).status).to.equal(200);
      const moved = await api.get('crypto/keys/b');
      expect(moved.status, moved.text).to.be.within(500, 599);
      expect(moved.text).to.not.contain('"name":"a"');
    } finally {
      await server.close();
    }
  });

  it('serves nothing but the seal endpoints while sealed: every path of every mount answers 503', async () => {
    const server = await startReliabilityServer();
    try {
      const api = server.api;
      await api.expect('POST', 'sys/mounts/crypto/sealed', { type: 'transit' });
      const doc = await api.expect('GET', 'sys/internal/specs/openapi', undefined, [200]);
      const models = modelFromOpenApi(doc.json);
      await api.expect('PUT', 'sys/seal', {});
      // Vault serves sys/seal-backend-status while sealed too, beside seal-status.
      const open = new Set(['/sys/seal-status', '/sys/seal-backend-status', '/sys/unseal', '/sys/init', '/sys/health', '/sys/leader']);
      const served: string[] = [];
      let checked = 0;
      for (const model of models) {
        const url = `/v1${model.template.replace(/\{\w+\}/g, 'x')}`;
        for (const op of model.operations) {
          const method = op.method === 'LIST' ? 'LIST' : op.method;
          const res = await send(server.address, { method, path: url, headers: { 'X-Vault-Token': server.rootToken, 'Content-Type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
          checked++;
          if (open.has(model.template)) continue;
          if (res.status !== 503 || res.json?.errors?.[0] !== new SealedError().message) served.push(`${method} ${url} → ${res.status} ${res.text.slice(0, 100)}`);
        }
      }
      expect(served).to.deep.equal([]);
      expect(checked).to.be.greaterThan(50);
      const status = await api.expect('GET', 'sys/seal-status', undefined, [200]);
      expect(status.json.sealed).to.equal(true);
    } finally {
      await server.close();
    }
  });

  describe('slow clients', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let server: Awaited<ReturnType<typeof startServer>>;

    before(async () => {
      dir = await tempDir('keywarden-threat-timeouts-');
      const file = path.join(dir.path, 'keywarden.json');
      await writeFile(file, JSON.stringify({
        listener: { tcp: { address: '127.0.0.1:0', tls_disable: true, http_read_header_timeout: '300ms', http_read_timeout: '800ms' } },
        storage: { inmem: {} },
      }));
      server = await startServer({ config: loadConfig(file), plugins: [], logger: pino({ level: 'silent' }) });
    });
    after(async () => {
      await server.close();
      await dir.remove();
    });

    function connect(): Promise<net.Socket> {
      const { hostname, port } = new URL(server.address);
      return new Promise((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => resolve(socket));
        socket.on('error', reject);
      });
    }

    it('closes a client that sends its headers too slowly (http_read_header_timeout), answering 408 in JSON', async () => {
      const socket = await connect();
      const done = collect(socket);
      socket.write('GET /v1/sys/seal-status HTTP/1.1\r\nHost: x\r\n');
      const timer = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 100);
      const { text } = await done;
      clearInterval(timer);
      expect(text).to.match(/^HTTP\/1\.1 408 /);
      expect(text).to.contain('Content-Type: application/json');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).errors).to.be.an('array');
    });

    it('closes a client that sends its body too slowly (http_read_timeout) long before the body would be complete', async () => {
      const socket = await connect();
      const done = collect(socket);
      const started = Date.now();
      socket.write('POST /v1/sys/unseal HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
      // One byte every 100 ms: the whole body would take 100 s.
      const timer = setInterval(() => socket.writable && socket.write(' '), 100);
      const { text, closedAt } = await done;
      clearInterval(timer);
      expect(text).to.match(/^HTTP\/1\.1 408 /);
      expect(closedAt - started, 'closed before the body could have been sent').to.be.below(100_000);
    });

    it('closes a connection that never sends anything, and keeps serving everyone else meanwhile', async () => {
      const idle = await connect();
      const done = collect(idle);
      const served = await send(server.address, { method: 'GET', path: '/v1/sys/seal-status' });
      expect(served.status).to.equal(200);
      const { text } = await done;
      expect(text).to.match(/^HTTP\/1\.1 408 /);
    });

    it('refuses a configuration whose header timeout is longer than its read timeout, naming both', () => {
      const parse = () => parseConfig({ listener: { tcp: { tls_disable: true, http_read_header_timeout: '40s', http_read_timeout: '30s' } }, storage: { inmem: {} } }, dir.path);
      expect(parse).to.throw(/http_read_header_timeout cannot be greater than http_read_timeout/);
    });

    it('answers a client that is merely slow but within the limits', async () => {
      const socket = await connect();
      const done = collect(socket);
      socket.write('GET /v1/sys/seal-status HTTP/1.1\r\nHost: x\r\n');
      await new Promise((r) => setTimeout(r, 100));
      socket.write('Connection: close\r\n\r\n');
      const { text } = await done;
      expect(text).to.match(/^HTTP\/1\.1 200 /);
    });
  });

  it('serves TLS with the certificate from the config and refuses plain HTTP on the TLS port', async () => {
    const dir = await tempDir('keywarden-threat-tls-');
    try {
      const { certPem, keyPem } = selfSignedCertificate();
      await writeFile(path.join(dir.path, 'cert.pem'), certPem);
      await writeFile(path.join(dir.path, 'key.pem'), keyPem, { mode: 0o600 });
      const file = path.join(dir.path, 'keywarden.json');
      await writeFile(file, JSON.stringify({ listener: { tcp: { address: '127.0.0.1:0', tls_cert_file: 'cert.pem', tls_key_file: 'key.pem' } }, storage: { inmem: {} } }));
      const server = await startServer({ config: loadConfig(file), plugins: [], logger: pino({ level: 'silent' }) });
      try {
        expect(server.address).to.match(/^https:\/\//);
        const secure = await send(server.address, { method: 'GET', path: '/v1/sys/seal-status' }, { ca: certPem });
        expect(secure.status).to.equal(200);
        expect(secure.json.initialized).to.equal(false);
        // The same port spoken to in plain HTTP: no HTTP answer, only a closed connection.
        const plain = server.address.replace(/^https:/, 'http:');
        let answered: number | undefined;
        try {
          answered = (await send(plain, { method: 'GET', path: '/v1/sys/seal-status' }, { timeoutMs: 10_000 })).status;
        } catch (err) {
          expect(err).to.not.be.instanceOf(HangError);
        }
        expect(answered, 'an HTTP status for a plain-text request on the TLS port').to.equal(undefined);
        // And a client that does not trust the certificate is refused by the handshake.
        let untrusted: unknown;
        try {
          await send(server.address, { method: 'GET', path: '/v1/sys/seal-status' });
        } catch (err) {
          untrusted = err;
        }
        expect(String(untrusted)).to.match(/self[- ]signed|certificate/i);
        expect((await send(server.address, { method: 'GET', path: '/v1/sys/seal-status' }, { ca: certPem })).status).to.equal(200);
      } finally {
        await server.close();
      }
    } finally {
      await dir.remove();
    }
  });

  describe('request bodies over the limit', () => {
    const LIMIT = 1024 * 1024;
    let server: ReliabilityServer;
    before(async () => {
      server = await startReliabilityServer({ listener: { maxRequestSize: LIMIT } });
    });
    after(() => server.close());

    it('refuses a declared Content-Length over the limit at once, without waiting for the body', async () => {
      const { hostname, port } = new URL(server.address);
      const socket = net.connect(Number(port), hostname);
      const done = collect(socket);
      socket.write(`POST /v1/auth/token/create HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${server.rootToken}\r\nContent-Length: ${10 * 1024 ** 3}\r\n\r\n{"a":`);
      const { text } = await done;
      expect(text).to.match(/^HTTP\/1\.1 413 /);
      expect(text).to.contain('request body too large');
    });

    it('stops reading a streamed (chunked) body as soon as it passes the limit: the 413 comes while the client is still sending', async () => {
      const { hostname, port } = new URL(server.address);
      const socket = net.connect(Number(port), hostname);
      const done = collect(socket);
      let written = 0;
      let answered = -1;
      socket.on('data', () => {
        if (answered < 0) answered = written;
      });
      const total = 256 * 1024 * 1024;
      socket.write(`POST /v1/auth/token/create HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${server.rootToken}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      await new Promise<void>((resolve) => {
        const pump = () => {
          while (written < total && answered < 0 && !socket.destroyed) {
            written += chunk.length;
            if (!socket.write(frame)) {
              socket.once('drain', pump);
              return;
            }
          }
          resolve();
        };
        socket.once('close', () => resolve());
        pump();
      });
      const { text } = await done;
      expect(text).to.match(/^HTTP\/1\.1 413 /);
      expect(answered, 'bytes sent when the 413 arrived').to.be.above(LIMIT).and.below(total / 4);
    });
  });
});

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(full)));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}
