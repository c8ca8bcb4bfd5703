/**
 * keys/:name/csr and keys/:name/set-certificate: CSRs of every signing type that `openssl req
 * -verify` accepts, templates, version selection, certificate chains signed by an openssl test CA
 * (leaf checks, overwrite, read and export), and refusals that store nothing.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { TransitHarness } from './harness.js';
import type { Storage } from '../../../storage/storage.js';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');

async function ok(res: Promise<{ status: number; error?: string; data: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, r.error).to.equal(status);
  return r.data;
}

async function snapshot(storage: Storage, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await storage.list(prefix)) {
    if (entry.endsWith('/')) Object.assign(out, await snapshot(storage, prefix + entry));
    else out[prefix + entry] = Buffer.from((await storage.get(prefix + entry))!).toString('base64');
  }
  return out;
}

describe('transit CSRs and certificate chains', function () {
  this.timeout(60_000);
  let h: TransitHarness;
  let dir: string;
  let fileCount = 0;

  /** Runs openssl in the test's directory; returns stdout (stderr folded in). */
  function openssl(...args: string[]): string {
    return execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  function file(content: string, extension = 'pem'): string {
    const name = `f${++fileCount}.${extension}`;
    writeFileSync(path.join(dir, name), content);
    return name;
  }

  /** `openssl req -verify` on the CSR: throws unless the self-signature verifies. */
  function verifyCsr(csr: string): void {
    execFileSync('openssl', ['req', '-verify', '-noout', '-in', file(csr, 'csr')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** A leaf certificate for the CSR, signed by the test CA. */
  function issue(csr: string): string {
    const out = `leaf${++fileCount}.pem`;
    openssl('x509', '-req', '-in', file(csr, 'csr'), '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', out, '-extfile', 'leaf.cnf');
    return openssl('x509', '-in', out);
  }

  let caPem: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'keywarden-csr-'));
    writeFileSync(path.join(dir, 'leaf.cnf'), 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n');
    openssl(
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem',
      '-subj', '/CN=Keywarden Test CA', '-days', '2', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=keyCertSign',
    );
    caPem = openssl('x509', '-in', 'ca.pem');
    h = await TransitHarness.create();
    for (const type of ['rsa-2048', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519']) await ok(h.write(`keys/${type}`, { type }));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('csr', () => {
    const algorithms: Record<string, RegExp> = {
      'rsa-2048': /sha256WithRSAEncryption/,
      'ecdsa-p256': /ecdsa-with-SHA256/,
      'ecdsa-p384': /ecdsa-with-SHA384/,
      'ecdsa-p521': /ecdsa-with-SHA512/,
      ed25519: /ED25519/i,
    };
    for (const [type, algorithm] of Object.entries(algorithms)) {
      it(`makes a ${type} CSR that openssl req -verify accepts, carrying the key's public key`, async () => {
        const data = await ok(h.write(`keys/${type}/csr`));
        expect(data).to.include({ name: type, type });
        expect(data.csr).to.match(/^-----BEGIN CERTIFICATE REQUEST-----\n[\s\S]+\n-----END CERTIFICATE REQUEST-----\n$/);
        verifyCsr(data.csr);
        const csrFile = file(data.csr, 'csr');
        const pub = createPublicKey(openssl('req', '-in', csrFile, '-noout', '-pubkey'));
        const exported = (await ok(h.read(`export/public-key/${type}/1`))).keys['1'];
        const expected = type === 'ed25519' ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(exported, 'base64').toString('base64url') }, format: 'jwk' }) : createPublicKey(exported);
        expect(pub.equals(expected)).to.equal(true);
        expect(openssl('req', '-in', csrFile, '-noout', '-text')).to.match(algorithm);
      });
    }

    it('keeps a template\'s subject and requested extensions, with the key\'s own public key', async () => {
      openssl(
        'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'template.key', '-out', 'template.csr',
        '-subj', '/CN=app.example.com/O=Example Org', '-addext', 'subjectAltName=DNS:app.example.com,DNS:www.example.com',
      );
      const template = openssl('req', '-in', 'template.csr');
      const { csr } = await ok(h.write('keys/ecdsa-p256/csr', { csr: template }));
      verifyCsr(csr);
      const text = openssl('req', '-in', file(csr, 'csr'), '-noout', '-text');
      expect(text).to.match(/Subject: CN\s?=\s?app\.example\.com, O\s?=\s?Example Org/);
      expect(text).to.match(/DNS:app\.example\.com, DNS:www\.example\.com/);
      const pub = createPublicKey(openssl('req', '-in', file(csr, 'csr'), '-noout', '-pubkey'));
      expect(pub.equals(createPublicKey(openssl('req', '-in', 'template.csr', '-noout', '-pubkey')))).to.equal(false);
      expect(pub.equals(createPublicKey((await ok(h.read('keys/ecdsa-p256'))).keys['1'].public_key))).to.equal(true);
    });

    it('makes the CSR for the named version, the latest when unset or "latest"', async () => {
      await ok(h.write('keys/versioned', { type: 'ecdsa-p256' }));
      await ok(h.write('keys/versioned/rotate'));
      const keys = (await ok(h.read('keys/versioned'))).keys;
      for (const [version, expected] of [[undefined, '2'], ['latest', '2'], ['1', '1'], [1, '1']] as const) {
        const { csr } = await ok(h.write('keys/versioned/csr', version === undefined ? {} : { version }));
        const pub = createPublicKey(openssl('req', '-in', file(csr, 'csr'), '-noout', '-pubkey'));
        expect(pub.equals(createPublicKey(keys[expected].public_key)), String(version)).to.equal(true);
      }
    });

    it('refuses missing keys, non-signing and derived keys, public-only versions, bad versions and bad templates', async () => {
      await ok(h.write('keys/aes'));
      await ok(h.write('keys/derived-ed', { type: 'ed25519', derived: true }));
      const { publicKey } = generateKeyPairSync('ed25519');
      await ok(h.write('keys/public-only/import', { type: 'ed25519', public_key: publicKey.export({ type: 'spki', format: 'pem' }) }), 204);
      const cases: Array<[string, Record<string, unknown>, RegExp]> = [
        ['keys/missing/csr', {}, /key with provided name 'missing' not found/],
        ['keys/aes/csr', {}, /key type 'aes256-gcm96' does not support signing/],
        ['keys/derived-ed/csr', {}, /not supported on keys with derivation enabled/],
        ['keys/public-only/csr', {}, /private key not imported for key version selected/],
        ['keys/ed25519/csr', { version: '7' }, /key version 7 does not exist/],
        ['keys/ed25519/csr', { version: 'first' }, /invalid key version/],
        ['keys/ed25519/csr', { csr: 'not a pem' }, /could not decode PEM certificate request/],
        ['keys/ed25519/csr', { csr: `-----BEGIN CERTIFICATE REQUEST-----\n${b64('garbage')}\n-----END CERTIFICATE REQUEST-----\n` }, /could not parse DER|not a PKCS#10/],
      ];
      for (const [p, body, message] of cases) {
        const res = await h.write(p, body);
        expect(res.status, p).to.equal(400);
        expect(res.error, p).to.match(message);
      }
    });
  });

  describe('set-certificate', () => {
    it('stores a chain whose leaf carries the key\'s public key; read and export return it', async () => {
      const leaf = issue((await ok(h.write('keys/ecdsa-p384/csr'))).csr).trim();
      const chain = `${leaf}\n${caPem.trim()}\n`;
      const data = await ok(h.write('keys/ecdsa-p384/set-certificate', { certificate_chain: chain }));
      expect(data).to.include({ name: 'ecdsa-p384', type: 'ecdsa-p384', 'certificate-chain': chain });
      const expected = `${leaf}\n${caPem.trim()}`;
      expect((await ok(h.read('keys/ecdsa-p384'))).keys['1'].certificate_chain).to.equal(expected);
      // Not exportable, yet its chain exports, as its public key does.
      expect((await ok(h.read('export/certificate-chain/ecdsa-p384/1'))).keys['1']).to.equal(expected);
    });

    it('does so for RSA and Ed25519 keys, and for a named version', async () => {
      for (const type of ['rsa-2048', 'ed25519']) {
        const leaf = issue((await ok(h.write(`keys/${type}/csr`))).csr);
        await ok(h.write(`keys/${type}/set-certificate`, { certificate_chain: leaf }));
        expect((await ok(h.read(`keys/${type}`))).keys['1'].certificate_chain).to.equal(leaf.trim());
      }
      await ok(h.write('keys/two-versions', { type: 'ed25519' }));
      await ok(h.write('keys/two-versions/rotate'));
      const leaf1 = issue((await ok(h.write('keys/two-versions/csr', { version: '1' }))).csr);
      await ok(h.write('keys/two-versions/set-certificate', { certificate_chain: leaf1, version: '1' }));
      const keys = (await ok(h.read('keys/two-versions'))).keys;
      expect(keys['1'].certificate_chain).to.equal(leaf1.trim());
      expect(keys['2'].certificate_chain).to.equal('');
    });

    it('overwrites the previous chain', async () => {
      const leaf = issue((await ok(h.write('keys/ecdsa-p521/csr'))).csr).trim();
      await ok(h.write('keys/ecdsa-p521/set-certificate', { certificate_chain: `${leaf}\n${caPem}` }));
      const second = issue((await ok(h.write('keys/ecdsa-p521/csr'))).csr).trim();
      await ok(h.write('keys/ecdsa-p521/set-certificate', { certificate_chain: second }));
      expect((await ok(h.read('keys/ecdsa-p521'))).keys['1'].certificate_chain).to.equal(second);
    });

    it('keeps the chain through backup and restore', async () => {
      await ok(h.write('keys/chained', { type: 'ecdsa-p256', exportable: true, allow_plaintext_backup: true }));
      const leaf = issue((await ok(h.write('keys/chained/csr'))).csr).trim();
      await ok(h.write('keys/chained/set-certificate', { certificate_chain: `${leaf}\n${caPem}` }));
      await ok(h.write('restore/chained-copy', { backup: (await ok(h.read('backup/chained'))).backup }), 204);
      expect((await ok(h.read('keys/chained-copy'))).keys['1'].certificate_chain).to.equal(`${leaf}\n${caPem.trim()}`);
    });

    it('refuses a leaf of another key, a CA first, two leaves, garbage, and keys that cannot carry chains — storing nothing', async () => {
      await ok(h.write('keys/other', { type: 'ecdsa-p256' }));
      await ok(h.write('keys/plain-aes'));
      const otherLeaf = issue((await ok(h.write('keys/other/csr'))).csr);
      const ownLeaf = issue((await ok(h.write('keys/ecdsa-p256/csr'))).csr);
      const edLeaf = issue((await ok(h.write('keys/ed25519/csr'))).csr);
      const cases: Array<[string, Record<string, unknown>, RegExp]> = [
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: otherLeaf }, /leaf certificate public key does not match the key version selected/],
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: edLeaf }, /public key algorithm 'ed25519' does not match the transit key type 'ecdsa-p256'/],
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: `${caPem}${ownLeaf}` }, /not a leaf certificate/],
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: `${ownLeaf}${otherLeaf}` }, /more than one leaf certificate/],
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: 'hello' }, /did not contain any valid PEM certificate/],
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: `-----BEGIN CERTIFICATE-----\n${b64('garbage')}\n-----END CERTIFICATE-----\n` }, /failed to parse certificate 1/],
        ['keys/ecdsa-p256/set-certificate', {}, /missing required field "certificate_chain"/],
        ['keys/ecdsa-p256/set-certificate', { certificate_chain: ownLeaf, version: '3' }, /key version 3 does not exist/],
        ['keys/plain-aes/set-certificate', { certificate_chain: ownLeaf }, /does not support signing/],
        ['keys/missing/set-certificate', { certificate_chain: ownLeaf }, /not found/],
      ];
      const before = await snapshot(h.storage);
      for (const [p, body, message] of cases) {
        const res = await h.write(p, body);
        expect(res.status, JSON.stringify(body).slice(0, 60)).to.equal(400);
        expect(res.error).to.match(message);
      }
      expect(await snapshot(h.storage)).to.deep.equal(before);
    });
  });
});
