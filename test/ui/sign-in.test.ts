/**
 * The sign-in page in headless Chromium against a real server: the methods it offers without a
 * token (the auth mounts tuned listing_visibility="unauth"), userpass with a right and a wrong
 * password, OIDC end to end against the stand-in provider (its authorization endpoint signs its one
 * user in at once), and a method that is not listed, reached by its mount path. Screenshots of each
 * screen go to test-output/ui/.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, UI_SCREENSHOTS, watchedPage } from '../helpers/browser.js';
import { startUnsealedServer } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';
import { StandInOidcProvider } from '../fixtures/identity/oidc-provider.js';

const PASSWORD = 'correct horse battery staple';

describe('the web UI sign-in page: userpass and OIDC (ui/pages/login.tsx)', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;
  let provider: StandInOidcProvider;
  let browser: Browser;
  let page: Page;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  /** Every URL the page requested or went to, to show no password ever lands in one. */
  const urls: string[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(UI_SCREENSHOTS, `${name}.png`), fullPage: true });
  const method = () => page.getByLabel('Method');
  const ok = async (response: Promise<{ status: number; text: string }>, status = 204) => {
    const res = await response;
    expect(res.status, res.text).to.equal(status);
  };

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    provider = await new StandInOidcProvider().start();
    server = await startUnsealedServer({ ui: true });
    root = server.client;
    await ok(root.put('sys/policies/acl/staff', { policy: 'path "sys/mounts" { capabilities = ["read"] }' }));

    await ok(root.post('sys/auth/people', { type: 'userpass', description: 'Staff accounts', config: { listing_visibility: 'unauth' } }));
    await ok(root.post('auth/people/users/alice', { password: PASSWORD, token_policies: 'staff' }));
    await ok(root.post('sys/auth/break-glass', { type: 'userpass', description: 'Break-glass accounts' }));
    await ok(root.post('auth/break-glass/users/ops', { password: PASSWORD, token_policies: 'staff' }));

    await ok(root.post('sys/auth/sso', { type: 'oidc', description: 'Company SSO' }));
    await ok(root.post('sys/auth/sso/tune', { listing_visibility: 'unauth' }));
    const config = { oidc_discovery_url: provider.url, oidc_discovery_ca_pem: provider.ca.certPem, oidc_client_id: provider.client.id, oidc_client_secret: provider.client.secret };
    await ok(root.post('auth/sso/config', config));
    const redirect = `${server.address}/ui/vault/auth/sso/oidc/callback`;
    await ok(root.post('auth/sso/role/people', { user_claim: 'email', allowed_redirect_uris: redirect, token_policies: 'staff' }));

    browser = await launchBrowser();
    // The stand-in provider's certificate comes from a CA made for the test, which the browser does not know.
    page = await watchedPage(browser, { viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: true }, { cspViolations, pageErrors });
    page.on('request', (request) => urls.push(request.url()));
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await shot(`failed-sign-in-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await provider?.close();
  });

  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  };

  it('offers the token and the auth methods tuned listing_visibility="unauth", and no other, before anyone signs in', async () => {
    await page.goto(`${server.address}/ui/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await method().locator('option', { hasText: 'Company SSO' }).waitFor({ state: 'attached' });
    const offered = await method().locator('option').allTextContents();
    expect(offered).to.deep.equal(['Token', 'Staff accounts', 'Company SSO', 'Other (by mount path)']);
    await shot('20-sign-in-methods');
  });

  it('signs in with userpass: a wrong password shows the server\'s message, the right one signs in; the password is in no URL or storage', async () => {
    await method().selectOption({ label: 'Staff accounts' });
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.equal('invalid username or password');
    await shot('21-sign-in-userpass-refused');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.locator('header .who').textContent()).to.contain('alice');
    await shot('22-sign-in-userpass-signed-in');

    const stored = await page.evaluate(() => JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage } }));
    expect(stored).not.to.contain(PASSWORD);
    expect(stored).to.match(/"keywarden\.token":"(hvs|s)\./);
    expect(urls.filter((url) => url.includes(encodeURIComponent(PASSWORD)) || url.includes(PASSWORD))).to.deep.equal([]);
    expect(urls).to.include(`${server.address}/v1/auth/people/login/alice`);
    await signOut();
  });

  it('signs in with OIDC end to end: the provider signs the user in and sends the browser back to the UI\'s callback route', async () => {
    await method().selectOption({ label: 'Company SSO' });
    await page.getByLabel('Role').fill('people');
    await shot('23-sign-in-oidc');
    await page.getByRole('button', { name: 'Sign in with OIDC' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.locator('header .who').textContent()).to.contain('alice@example.com');
    // The browser went to the provider and came back to the callback route, whose code is then gone from the URL.
    expect(urls.some((url) => url.startsWith(`${provider.url}/authorize?`))).to.equal(true);
    expect(urls.some((url) => url.startsWith(`${server.address}/ui/vault/auth/sso/oidc/callback?`))).to.equal(true);
    expect(urls.some((url) => url.startsWith(`${server.address}/v1/auth/sso/oidc/callback?state=`))).to.equal(true);
    expect(new URL(page.url()).pathname).to.equal('/ui/');
    expect(new URL(page.url()).search).to.equal('');
    await shot('24-sign-in-oidc-signed-in');
    await signOut();
  });

  it('shows the provider\'s refusal on the callback route, with the way back to sign in', async () => {
    provider.refuseWith = 'access_denied';
    try {
      await method().selectOption({ label: 'Company SSO' });
      await page.getByLabel('Role').fill('people');
      await page.getByRole('button', { name: 'Sign in with OIDC' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).to.equal('Vault login failed. access_denied');
      await page.getByRole('link', { name: 'Back to sign in' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await method().waitFor();
    } finally {
      provider.refuseWith = undefined;
    }
  });

  it('says which redirect URI to allow when the role does not allow the UI\'s', async () => {
    await ok(root.post('auth/sso/role/elsewhere', { user_claim: 'email', allowed_redirect_uris: 'http://localhost:8250/oidc/callback' }));
    await method().selectOption({ label: 'Company SSO' });
    await page.getByLabel('Role').fill('elsewhere');
    await page.getByRole('button', { name: 'Sign in with OIDC' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.equal(
      `the role does not allow the redirect URI ${server.address}/ui/vault/auth/sso/oidc/callback: add it to its allowed_redirect_uris`,
    );
  });

  it('reaches a method that is not listed by its type and mount path ("Other")', async () => {
    await method().selectOption({ label: 'Other (by mount path)' });
    await page.getByLabel('Type').selectOption('userpass');
    await page.getByLabel('Mount path').fill('break-glass');
    await page.getByLabel('Username').fill('ops');
    await page.getByLabel('Password').fill(PASSWORD);
    await shot('25-sign-in-other-method');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.locator('header .who').textContent()).to.contain('ops');
    await signOut();
  });

  it('shows the sign-in page on a callback address whose mount path is a malformed escape', async () => {
    await page.goto(`${server.address}/ui/vault/auth/%E0%A4%A/oidc/callback?state=s&code=c`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await method().waitFor();
    expect(pageErrors).to.deep.equal([]);
  });

  it('broke no Content-Security-Policy rule and threw no page error', () => {
    expect(cspViolations).to.deep.equal([]);
    expect(pageErrors).to.deep.equal([]);
  });
});
