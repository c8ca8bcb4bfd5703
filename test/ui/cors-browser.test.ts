/**
 * CORS from a real browser (sys/config/cors, core/http/cors.ts): a page served on a second
 * loopback origin calls Keywarden with fetch, as a web app hosted elsewhere would. With CORS off
 * the browser blocks the answer; with the page's origin allowed, reads and writes carrying
 * X-Vault-Token (which needs a preflight) succeed; with only another origin allowed, it is blocked.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startUnsealedServer } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';

/** What the page's fetch came to: the status and body, or the browser's refusal. */
type Outcome = { ok: true; status: number; body: unknown } | { ok: false; error: string };

describe('CORS from a browser page on another origin', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let site: http.Server;
  let siteOrigin: string;
  let browser: Browser;
  let page: Page;
  const record = { cspViolations: [] as string[], pageErrors: [] as string[] };

  /** Runs fetch in the page (the page's origin is the site's), with the root token in X-Vault-Token. */
  const call = (method: string, path: string, body?: unknown): Promise<Outcome> =>
    page.evaluate(
      async ({ url, method, token, body }) => {
        try {
          const res = await fetch(url, {
            method,
            headers: { 'X-Vault-Token': token, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          const text = await res.text();
          return { ok: true as const, status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
        } catch (err) {
          return { ok: false as const, error: String(err) };
        }
      },
      { url: `${server.address}/v1/${path}`, method, token: server.rootToken, body },
    );

  before(async function () {
    this.timeout(300_000);
    server = await startUnsealedServer();
    // The other origin: another port on loopback serves a blank page that the tests script.
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>another origin</title><p>another origin</p>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    expect(new URL(server.address).origin).not.to.equal(siteOrigin);
    browser = await launchBrowser();
    page = await watchedPage(browser, {}, record);
    await page.goto(`${siteOrigin}/`);
  });

  afterEach(() => server.client.delete('sys/config/cors'));

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await server?.close();
  });

  it('with sys/config/cors off, the browser blocks the answer', async () => {
    const outcome = await call('GET', 'sys/mounts');
    expect(outcome.ok).to.equal(false);
    expect((outcome as { error: string }).error).to.match(/Failed to fetch/);
  });

  it('with the page\'s origin allowed, a read and a write with X-Vault-Token (preflighted) succeed', async () => {
    expect((await server.client.put('sys/config/cors', { allowed_origins: [siteOrigin] })).status).to.equal(204);
    const read = await call('GET', 'sys/mounts');
    expect(read).to.deep.include({ ok: true, status: 200 });
    expect((read as { body: { data: Record<string, unknown> } }).body.data).to.have.property('sys/');
    // PUT with a JSON body and X-Vault-Token: the browser asks first (OPTIONS), then sends it.
    const write = await call('PUT', 'sys/policies/acl/from-browser', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect(write).to.deep.include({ ok: true, status: 204 });
    expect((await server.client.get('sys/policies/acl/from-browser')).status).to.equal(200);
    // An error answer reaches the page too, with the server's message.
    const refused = await call('PUT', 'sys/policies/acl/broken', { policy: 'path {' });
    expect(refused).to.deep.include({ ok: true, status: 400 });
  });

  it('with only another origin allowed, the browser blocks the answer and the write does not happen', async () => {
    expect((await server.client.put('sys/config/cors', { allowed_origins: ['https://app.example.com'] })).status).to.equal(204);
    expect((await call('GET', 'sys/mounts')).ok).to.equal(false);
    expect((await call('PUT', 'sys/policies/acl/blocked', { policy: 'path "secret/*" { capabilities = ["read"] }' })).ok).to.equal(false);
    expect((await server.client.get('sys/policies/acl/blocked')).status).to.equal(404);
  });

  it('the wildcard alone allows the page\'s origin', async () => {
    expect((await server.client.put('sys/config/cors', { allowed_origins: '*' })).status).to.equal(204);
    expect(await call('GET', 'sys/seal-status')).to.deep.include({ ok: true, status: 200 });
  });

  it('threw no page error', () => {
    expect(record.pageErrors).to.deep.equal([]);
  });
});
