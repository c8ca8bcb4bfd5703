/**
 * The pki secrets engine over HTTP (https://developer.hashicorp.com/vault/api-docs/secret/pki):
 * a root, a role, certificates issued and signed under it — checked with node:crypto's
 * X509Certificate and with `openssl verify` (chain, SANs, validity, usages) — revocation into the
 * CRL, leases whose revocation revokes the certificate (over HTTP and the CLI), and the parts of
 * Vault's API it refuses.
 */
import { expect } from 'chai';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { runCli } from '../../helpers/cli.js';

const run = promisify(execFile);

describe('the pki secrets engine', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let client: TestClient;
  let dir: { path: string; remove: () => Promise<void> };
  let caPem: string;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    client = server.client;
    dir = await tempDir('keywarden-pki-');
    expect((await client.post('sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } })).status).to.equal(204);
    const root = await client.post('pki/root/generate/internal', { common_name: 'hvac.com', ttl: '8760h' });
    expect(root.status, root.text).to.equal(200);
    caPem = root.body.data.certificate as string;
    expect((await client.post('pki/config/urls', { issuing_certificates: 'http://127.0.0.1:8200/v1/pki/ca', crl_distribution_points: 'http://127.0.0.1:8200/v1/pki/crl' })).status).to.equal(200);
    expect((await client.post('pki/roles/web', { allowed_domains: 'hvac.com', allow_subdomains: true, generate_lease: true, max_ttl: '72h' })).status).to.equal(200);
  });
  after(async () => {
    await server.close();
    await dir.remove();
  });

  /** `openssl verify` of a leaf against the CA, with the CRL when given; its output. */
  async function opensslVerify(leaf: string, crl?: string): Promise<{ ok: boolean; output: string }> {
    await writeFile(path.join(dir.path, 'ca.pem'), caPem);
    await writeFile(path.join(dir.path, 'leaf.pem'), leaf);
    const args = ['verify', '-CAfile', path.join(dir.path, 'ca.pem')];
    if (crl) {
      await writeFile(path.join(dir.path, 'crl.pem'), crl);
      args.push('-crl_check', '-CRLfile', path.join(dir.path, 'crl.pem'));
    }
    try {
      const { stdout, stderr } = await run('openssl', [...args, path.join(dir.path, 'leaf.pem')]);
      return { ok: true, output: stdout + stderr };
    } catch (err) {
      const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
      return { ok: false, output: stdout + stderr };
    }
  }

  it('generates a self-signed CA root and keeps its key (internal): never answered', async () => {
    const ca = new X509Certificate(caPem);
    expect(ca.ca).to.equal(true);
    expect(ca.subject).to.equal('CN=hvac.com');
    expect(ca.verify(ca.publicKey)).to.equal(true);
    const lifetime = (Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / 1000;
    expect(lifetime).to.be.closeTo(8760 * 3600 + 30, 2);
    expect((await client.get('pki/ca/pem')).text).to.equal(caPem);
    expect((await client.get('pki/cert/ca')).body.data.certificate).to.equal(caPem);
  });

  it('issues a certificate chained to the root, with the names, usages, URLs and TTL of its role', async () => {
    const res = await client.post('pki/issue/web', { common_name: 'test.hvac.com', alt_names: 'www.hvac.com', ip_sans: '10.0.0.1' });
    expect(res.status, res.text).to.equal(200);
    const data = res.body.data;
    expect(data).to.include.keys('certificate', 'issuing_ca', 'ca_chain', 'private_key', 'private_key_type', 'serial_number', 'expiration');
    expect(data.issuing_ca).to.equal(caPem);
    expect(data.ca_chain).to.deep.equal([caPem]);
    expect(data.private_key_type).to.equal('rsa');
    expect(data.private_key).to.match(/^-----BEGIN RSA PRIVATE KEY-----/);
    const leaf = new X509Certificate(data.certificate as string);
    const ca = new X509Certificate(caPem);
    expect(leaf.checkIssued(ca)).to.equal(true);
    expect(leaf.verify(ca.publicKey)).to.equal(true);
    expect(leaf.ca).to.equal(false);
    expect(leaf.subject).to.equal('CN=test.hvac.com');
    expect(leaf.subjectAltName).to.equal('DNS:test.hvac.com, DNS:www.hvac.com, IP Address:10.0.0.1');
    expect(leaf.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(leaf.infoAccess).to.contain('CA Issuers - URI:http://127.0.0.1:8200/v1/pki/ca');
    expect(leaf.serialNumber.toLowerCase().match(/../g)!.join(':')).to.equal(data.serial_number);
    expect(data.expiration).to.equal(Math.floor(Date.parse(leaf.validTo) / 1000));
    // No TTL asked: the mount's default (768h) is capped at the role's max_ttl, with Vault's warning.
    expect((Date.parse(leaf.validTo) - Date.now()) / 1000).to.be.closeTo(72 * 3600, 60);
    expect(res.body.warnings[0]).to.contain('is longer than permitted maxTTL');
    expect(leaf.checkPrivateKey((await import('node:crypto')).createPrivateKey(data.private_key as string))).to.equal(true);
    const verified = await opensslVerify(data.certificate as string);
    expect(verified.ok, verified.output).to.equal(true);
    // The key usage bits, as openssl reads them.
    const { stdout } = await run('openssl', ['x509', '-noout', '-ext', 'keyUsage,basicConstraints', '-in', path.join(dir.path, 'leaf.pem')]);
    expect(stdout).to.contain('critical').and.to.contain('Digital Signature, Key Encipherment, Key Agreement');
  });

  it('answers the certificate with a lease under pki/issue/<role>/ that lasts as long as it, not renewable', async () => {
    const res = await client.post('pki/issue/web', { common_name: 'lease.hvac.com', ttl: '1h' });
    expect(res.body.lease_id).to.match(/^pki\/issue\/web\/[A-Za-z0-9]{24}$/);
    expect(res.body.lease_duration).to.be.closeTo(3600, 2);
    expect(res.body.renewable).to.equal(false);
    const renew = await client.put('sys/leases/renew', { lease_id: res.body.lease_id });
    expect(renew.status).to.equal(400);
    expect(renew.body.errors).to.deep.equal(['lease is not renewable']);
  });

  it('revoking the lease revokes the certificate: the CRL lists it and openssl refuses it', async () => {
    const res = await client.post('pki/issue/web', { common_name: 'revoked.hvac.com' });
    const serial = res.body.data.serial_number as string;
    const before = await opensslVerify(res.body.data.certificate as string, (await client.get('pki/crl/pem')).text);
    expect(before.ok, before.output).to.equal(true);
    expect((await client.put('sys/leases/revoke', { lease_id: res.body.lease_id })).status).to.equal(204);
    const cert = await client.get(`pki/cert/${serial}`);
    expect(cert.body.data.revocation_time).to.be.greaterThan(0);
    expect((await client.list('pki/certs/revoked')).body.data.keys).to.include(serial);
    const crlPem = (await client.get('pki/crl/pem')).text;
    await writeFile(path.join(dir.path, 'crl-only.pem'), crlPem);
    const { stdout } = await run('openssl', ['crl', '-noout', '-text', '-in', path.join(dir.path, 'crl-only.pem')]);
    expect(stdout.toLowerCase()).to.contain(serial.replace(/:/g, ''));
    const after = await opensslVerify(res.body.data.certificate as string, crlPem);
    expect(after.ok).to.equal(false);
    expect(after.output).to.contain('certificate revoked');
    // The DER CRL, as clients fetch it from crl_distribution_points.
    const der = await client.get('pki/crl');
    expect(der.headers['content-type']).to.equal('application/pkix-crl');
  });

  it('revokes by serial too, and refuses an unknown serial and the CA itself', async () => {
    const res = await client.post('pki/issue/web', { common_name: 'byserial.hvac.com' });
    const revoked = await client.post('pki/revoke', { serial_number: res.body.data.serial_number });
    expect(revoked.status, revoked.text).to.equal(200);
    expect(revoked.body.data.state).to.equal('revoked');
    const unknown = await client.post('pki/revoke', { serial_number: '01:02' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors[0]).to.equal('certificate with serial 01:02 not found');
    const ca = new X509Certificate(caPem);
    const self = await client.post('pki/revoke', { serial_number: ca.serialNumber });
    expect(self.status).to.equal(400);
    expect(self.body.errors[0]).to.contain('to its own CRL is not allowed');
  });

  it('refuses names its role does not allow, naming the name', async () => {
    const outside = await client.post('pki/issue/web', { common_name: 'test.example.com' });
    expect(outside.status).to.equal(400);
    expect(outside.body.errors).to.deep.equal(['common name test.example.com not allowed by this role']);
    const bare = await client.post('pki/issue/web', { common_name: 'hvac.com' });
    expect(bare.status).to.equal(400);
    const san = await client.post('pki/issue/web', { common_name: 'ok.hvac.com', alt_names: 'evil.example.org' });
    expect(san.body.errors).to.deep.equal(['subject alternate name evil.example.org not allowed by this role']);
    const unknownRole = await client.post('pki/issue/nobody', { common_name: 'a.hvac.com' });
    expect(unknownRole.body.errors).to.deep.equal(['unknown role: nobody']);
  });

  it('issues EC keys when the role says so', async () => {
    expect((await client.post('pki/roles/ec', { allowed_domains: 'hvac.com', allow_subdomains: true, key_type: 'ec', key_bits: 384 })).status).to.equal(200);
    const res = await client.post('pki/issue/ec', { common_name: 'ec.hvac.com' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.private_key_type).to.equal('ec');
    expect(res.body.lease_id).to.equal('');
    const leaf = new X509Certificate(res.body.data.certificate as string);
    expect(leaf.publicKey.asymmetricKeyDetails?.namedCurve).to.equal('secp384r1');
    expect(leaf.verify(new X509Certificate(caPem).publicKey)).to.equal(true);
  });

  it('signs a CSR for its own key, with the names of the request, and refuses a tampered one', async () => {
    await writeFile(path.join(dir.path, 'csr.cnf'), '[req]\nprompt=no\ndistinguished_name=dn\nreq_extensions=ext\n[dn]\nCN=csr.hvac.com\n[ext]\nsubjectAltName=DNS:alt.hvac.com\n');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(path.join(dir.path, 'csr-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const { stdout: csr } = await run('openssl', ['req', '-new', '-key', path.join(dir.path, 'csr-key.pem'), '-config', path.join(dir.path, 'csr.cnf')]);
    expect((await client.post('pki/roles/any', { allowed_domains: 'hvac.com', allow_subdomains: true, key_type: 'any' })).status).to.equal(200);
    const res = await client.post('pki/sign/any', { csr });
    expect(res.status, res.text).to.equal(200);
    const leaf = new X509Certificate(res.body.data.certificate as string);
    expect(leaf.subjectAltName).to.equal('DNS:csr.hvac.com, DNS:alt.hvac.com');
    expect(leaf.checkPrivateKey(privateKey)).to.equal(true);
    expect(res.body.data).not.to.have.property('private_key');
    const rsaOnly = await client.post('pki/sign/web', { csr });
    expect(rsaOnly.body.errors).to.deep.equal(['role requires keys of type rsa']);
    const tampered = csr.replace(/([A-Za-z0-9+/]{20})[A-Za-z0-9+/]/m, (m, head: string) => head + (m.endsWith('A') ? 'B' : 'A'));
    expect((await client.post('pki/sign/any', { csr: tampered })).status).to.equal(400);
  });

  it('lists the certificates it stored, reads one without a token', async () => {
    const res = await client.post('pki/issue/web', { common_name: 'listed.hvac.com' });
    const serial = res.body.data.serial_number as string;
    expect((await client.list('pki/certs')).body.data.keys).to.include(serial);
    const anonymous = await client.get(`pki/cert/${serial.replace(/:/g, '-')}`, { token: '' });
    expect(anonymous.status).to.equal(200);
    expect(anonymous.body.data.certificate).to.equal(res.body.data.certificate);
  });

  it('serves one issuer per mount: a second root and the multi-issuer API are refused with a 400 that says so', async () => {
    const second = await client.post('pki/root/generate/internal', { common_name: 'other.com' });
    expect(second.status).to.equal(400);
    expect(second.body.errors[0]).to.contain('one issuer per mount');
    for (const [method, p] of [['GET', 'pki/issuer/default'], ['LIST', 'pki/issuers'], ['POST', 'pki/intermediate/generate/internal'], ['GET', 'pki/acme/directory']] as const) {
      const res = await client.send(method, p);
      expect(res.status, `${method} ${p}`).to.equal(400);
    }
  });

  it('answers an exported root\'s key once, and DELETE root makes room for another', async () => {
    expect((await client.post('sys/mounts/pki2', { type: 'pki' })).status).to.equal(204);
    const exported = await client.post('pki2/root/generate/exported', { common_name: 'two.example', key_type: 'ec', ttl: '87600h' });
    expect(exported.status, exported.text).to.equal(200);
    expect(exported.body.data.private_key).to.match(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(exported.body.data.private_key_type).to.equal('ec');
    // The mount's max TTL (768h) caps a root's TTL, with a warning.
    expect(exported.body.warnings[0]).to.contain('maxTTL');
    expect((await client.delete('pki2/root')).status).to.equal(204);
    expect((await client.get('pki2/ca/pem')).status).to.equal(204);
    expect((await client.post('pki2/root/generate/internal', { common_name: 'three.example' })).status).to.equal(200);
  });

  it('keywarden lease revoke -prefix revokes every certificate leased under a role', async () => {
    const a = await client.post('pki/issue/web', { common_name: 'cli-a.hvac.com' });
    const b = await client.post('pki/issue/web', { common_name: 'cli-b.hvac.com' });
    const env = { PATH: process.env.PATH, HOME: dir.path, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: server.rootToken };
    const lookup = await runCli(['lease', 'lookup', a.body.lease_id as string], env);
    expect(lookup.code, lookup.stderr).to.equal(0);
    expect(lookup.stdout).to.match(/^renewable\s+false$/m);
    const revoked = await runCli(['lease', 'revoke', '-prefix', 'pki/issue/web'], env);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.equal('Success! Revoked any leases with prefix: pki/issue/web\n');
    for (const res of [a, b]) expect((await client.get(`pki/cert/${res.body.data.serial_number}`)).body.data.revocation_time).to.be.greaterThan(0);
    expect((await client.list('sys/leases/lookup/pki/issue/web/')).status).to.equal(404);
  });

  it('tidies certificates expired past the safety buffer', async () => {
    const res = await client.post('pki/tidy', { tidy_cert_store: true, tidy_revoked_certs: true, safety_buffer: '1s' });
    expect(res.status).to.equal(202);
    expect(res.body.warnings[0]).to.match(/^Tidy operation done: 0 expired certificates/);
  });
});
