/**
 * The CLI's TLS settings, as a user runs the CLI (a subprocess) against an https server: a CA from
 * -ca-cert / VAULT_CACERT / -ca-path / VAULT_CAPATH, -tls-skip-verify / VAULT_SKIP_VERIFY,
 * -tls-server-name / VAULT_TLS_SERVER_NAME, and a client certificate from -client-cert/-client-key
 * or VAULT_CLIENT_CERT/VAULT_CLIENT_KEY.
 */
import { expect } from 'chai';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../../helpers/server.js';
import { runCli } from '../../helpers/cli.js';
import { createTestCa, type PemFiles, type TestCa } from '../../helpers/certificates.js';
import { startTlsTestServer, type TlsTestServer } from '../../helpers/tls-server.js';

describe('keywarden CLI over TLS', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let tls: TlsTestServer;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = await tempDir();
    tls = await startTlsTestServer(dir.path);
    env = { PATH: process.env.PATH, HOME: dir.path, VAULT_ADDR: tls.server.address };
  });
  after(async () => {
    await tls.server.close();
    await dir.remove();
  });

  /** `status` reaches an uninitialized server: it prints the seal table and exits 2 (sealed). */
  const reachesServer = (run: { code: number | null; stdout: string; stderr: string }) => {
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(2);
    expect(run.stdout).to.match(/Initialized\s+false/);
  };

  it('refuses a server whose certificate it cannot verify, in one line that names the fix', async () => {
    const run = await runCli(['status'], env);
    expect(run.code).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr.trim().split('\n')).to.have.length(1);
    expect(run.stderr).to.contain("the server's certificate is not trusted");
    expect(run.stderr).to.contain('VAULT_CACERT');
    expect(run.stderr).to.not.contain('    at ');
  });

  it('verifies the server with the CA from VAULT_CACERT or -ca-cert', async () => {
    reachesServer(await runCli(['status'], { ...env, VAULT_CACERT: tls.ca.certFile }));
    reachesServer(await runCli(['status', `-ca-cert=${tls.ca.certFile}`], env));
  });

  it('verifies the server with the CAs in a VAULT_CAPATH or -ca-path directory, subdirectories included', async () => {
    const caDir = path.join(dir.path, 'cas');
    await mkdir(path.join(caDir, 'nested'), { recursive: true });
    // Like a system CA directory: another CA beside it, the server's one level down.
    await writeFile(path.join(caDir, 'unrelated.pem'), (await createTestCa(dir.path, 'unrelated')).certPem);
    await writeFile(path.join(caDir, 'nested', 'server-ca.pem'), tls.ca.certPem);
    reachesServer(await runCli(['status'], { ...env, VAULT_CAPATH: caDir }));
    reachesServer(await runCli(['status', `-ca-path=${caDir}`], env));
  });

  it('lets -ca-cert win over VAULT_CAPATH, and a wrong CA still fails', async () => {
    const other = await createTestCa(dir.path, 'other');
    const wrong = await runCli(['status', `-ca-cert=${other.certFile}`], env);
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.contain('not trusted');
    reachesServer(await runCli(['status', `-ca-cert=${tls.ca.certFile}`], { ...env, VAULT_CAPATH: path.dirname(other.certFile) + '/missing' }));
  });

  it('skips verification with -tls-skip-verify or VAULT_SKIP_VERIFY=true, and refuses a VAULT_SKIP_VERIFY that is not a boolean', async () => {
    reachesServer(await runCli(['status', '-tls-skip-verify'], env));
    reachesServer(await runCli(['status'], { ...env, VAULT_SKIP_VERIFY: 'true' }));
    reachesServer(await runCli(['status'], { ...env, VAULT_SKIP_VERIFY: '1' }));
    const verified = await runCli(['status'], { ...env, VAULT_SKIP_VERIFY: 'false' });
    expect(verified.stderr).to.contain('not trusted');
    const bad = await runCli(['read', 'sys/seal-status'], { ...env, VAULT_SKIP_VERIFY: 'yes' });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('could not parse VAULT_SKIP_VERIFY');
  });

  it('checks the certificate against -tls-server-name or VAULT_TLS_SERVER_NAME instead of the address', async () => {
    const named = await tls.ca.issue('named', { commonName: 'vault.internal', usage: 'server', dnsNames: ['vault.internal'] });
    const server = https.createServer({ cert: named.certPem, key: named.keyPem }, (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ data: { reached: 'yes' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const base = { ...env, VAULT_ADDR: address, VAULT_CACERT: tls.ca.certFile };
      const wrongName = await runCli(['read', '-field=reached', 'x'], base);
      expect(wrongName.code).to.equal(2);
      expect(wrongName.stderr).to.contain('not valid for this address');
      expect(wrongName.stderr).to.contain('-tls-server-name');
      expect((await runCli(['read', '-field=reached', '-tls-server-name=vault.internal', 'x'], base)).stdout).to.equal('yes');
      expect((await runCli(['read', '-field=reached', 'x'], { ...base, VAULT_TLS_SERVER_NAME: 'vault.internal' })).stdout).to.equal('yes');
    } finally {
      server.close();
    }
  });

  describe('against a server that requires a client certificate', () => {
    let clientCa: TestCa;
    let client: PemFiles;
    let server: https.Server;
    let base: NodeJS.ProcessEnv;

    before(async () => {
      clientCa = await createTestCa(dir.path, 'client-ca');
      client = await clientCa.issue('client', { commonName: 'deploy-bot', usage: 'client' });
      const serverCert = await tls.ca.issue('mtls-server', { commonName: 'mtls', usage: 'server', ips: ['127.0.0.1'] });
      // A plain node https server that, like a listener with a client CA, refuses clients without a certificate it trusts.
      server = https.createServer({ cert: serverCert.certPem, key: serverCert.keyPem, ca: [clientCa.certPem], requestCert: true, rejectUnauthorized: true }, (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ data: { client: peer.subject.CN } }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = { ...env, VAULT_ADDR: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, VAULT_CACERT: tls.ca.certFile };
    });
    after(() => {
      server.close();
    });

    it('presents the certificate from VAULT_CLIENT_CERT and VAULT_CLIENT_KEY', async () => {
      const run = await runCli(['read', '-field=client', 'whoami'], { ...base, VAULT_CLIENT_CERT: client.certFile, VAULT_CLIENT_KEY: client.keyFile });
      expect(run.stderr).to.equal('');
      expect(run.stdout).to.equal('deploy-bot');
    });

    it('presents the certificate from -client-cert and -client-key', async () => {
      const run = await runCli(['read', '-field=client', `-client-cert=${client.certFile}`, `-client-key=${client.keyFile}`, 'whoami'], base);
      expect(run.stdout).to.equal('deploy-bot');
    });

    it('says the server may want a client certificate when it has none to give', async () => {
      const run = await runCli(['read', 'whoami'], base);
      expect(run.code).to.equal(2);
      expect(run.stderr.trim().split('\n')).to.have.length(1);
      expect(run.stderr).to.contain('client certificate');
      expect(run.stderr).to.contain('-client-cert');
    });

    it('refuses a client certificate without its key, and a key that does not match, before connecting', async () => {
      const alone = await runCli(['read', 'whoami'], { ...base, VAULT_CLIENT_CERT: client.certFile });
      expect(alone.code).to.equal(2);
      expect(alone.stderr).to.contain('both client cert and client key must be provided');
      const mismatched = await runCli(['read', `-client-cert=${client.certFile}`, `-client-key=${clientCa.keyFile}`, 'whoami'], base);
      expect(mismatched.code).to.equal(2);
      expect(mismatched.stderr).to.contain('cannot be used together');
    });
  });

  it('refuses a CA file that cannot be read or holds no certificate, and a CA directory with such a file', async () => {
    const missing = await runCli(['read', 'sys/seal-status'], { ...env, VAULT_CACERT: path.join(dir.path, 'nope.pem') });
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain('cannot read the CA certificate').and.to.contain('ENOENT');
    const notPem = await runCli(['read', 'sys/seal-status'], { ...env, VAULT_CACERT: tls.ca.keyFile });
    expect(notPem.stderr).to.contain('holds no PEM certificate');
    const withKey = path.join(dir.path, 'with-key');
    await mkdir(withKey);
    await writeFile(path.join(withKey, 'ca.pem'), tls.ca.certPem);
    await writeFile(path.join(withKey, 'ca-key.pem'), tls.ca.keyPem);
    const mixed = await runCli(['read', 'sys/seal-status'], { ...env, VAULT_CAPATH: withKey });
    expect(mixed.code).to.equal(2);
    expect(mixed.stderr).to.contain(`${path.join(withKey, 'ca-key.pem')} holds no PEM certificate`);
  });
});
