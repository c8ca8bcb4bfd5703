/**
 * How the CLI reports a server it cannot talk to, as a user sees it (a subprocess): one line on
 * standard error that says what went wrong and what to try, no stack trace, and vault's exit
 * codes (2 for an error on the way to the server; `status` keeps 2 for "sealed" and exits 1).
 */
import { expect } from 'chai';
import net from 'node:net';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { startTestServer, tempDir } from '../../helpers/server.js';
import { startTlsTestServer, type TlsTestServer } from '../../helpers/tls-server.js';
import type { RunningServer } from '../../../core/server.js';

/** A port nothing listens on: bound once to learn a free one, then closed. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function expectOneLine(run: CliRun, code: number, ...phrases: string[]): void {
  expect(run.code, run.stderr).to.equal(code);
  expect(run.stdout).to.equal('');
  expect(run.stderr.trim().split('\n'), run.stderr).to.have.length(1);
  expect(run.stderr).to.not.match(/\n\s+at /);
  for (const phrase of phrases) expect(run.stderr).to.contain(phrase);
}

describe('keywarden CLI connection errors', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let plain: RunningServer;
  let tls: TlsTestServer;
  const env = (address: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: dir.path, VAULT_ADDR: address });

  before(async () => {
    dir = await tempDir();
    plain = await startTestServer();
    tls = await startTlsTestServer(dir.path);
  });
  after(async () => {
    await plain.close();
    await tls.server.close();
    await dir.remove();
  });

  it('a server that is down: "connection refused" with the address, exit 2 (status: exit 1)', async () => {
    const address = `http://127.0.0.1:${await closedPort()}`;
    expectOneLine(await runCli(['read', 'secret/x'], env(address)), 2, 'Error reading secret/x', 'connection refused', address.slice('http://'.length));
    expectOneLine(await runCli(['status'], env(address)), 1, 'Error checking seal status', 'connection refused');
  });

  it('http:// to an https listener: says the server closed the connection and to try https://', async () => {
    const address = tls.server.address.replace('https://', 'http://');
    expectOneLine(await runCli(['read', 'sys/seal-status'], env(address)), 2, 'closed the connection', 'use an https:// address');
  });

  it('https:// to an http listener: says the server did not answer with TLS and to try http://', async () => {
    const address = plain.address.replace('http://', 'https://');
    expectOneLine(await runCli(['read', 'sys/seal-status'], env(address)), 2, 'did not answer with TLS', 'use an http:// address');
  });

  it('an address that is not an http(s) URL: one line, exit 2, nothing sent', async () => {
    expectOneLine(await runCli(['read', 'sys/seal-status'], env('localhost:8200')), 2, 'must start with http:// or https://');
    expectOneLine(await runCli(['read', 'sys/seal-status', '-address=not a url'], env(plain.address)), 2, 'is not a URL');
  });

  it('-address wins over VAULT_ADDR and KEYWARDEN_ADDR', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const run = await runCli(['read', '-field=initialized', `-address=${plain.address}`, 'sys/seal-status'], { ...env(down), KEYWARDEN_ADDR: down });
    expect(run.stderr).to.equal('');
    expect(run.stdout).to.equal('false');
  });
});
