/**
 * The web UI made safe for operators (issue #38), in headless Chromium against a real server: the
 * init screen's base64 shares and their download; transit mounts and keys picked from lists, and
 * an encrypt that would create a key asking first; a transit key's backup offered only when the
 * key allows it; kv values masked until shown, a key/value editor beside JSON, and links to kv
 * paths; details in view at 1280×800; long policy lines wrapped; root not editable; a token's
 * unknown policy flagged; durations shown as typed; the navigation and mount table at 390 px; the
 * request-rate chart's size and axes; auth methods on the dashboard; and an audit page that says
 * where devices are declared. A screenshot of each screen goes to test-output/ui/.
 */
import { expect } from 'chai';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, UI_SCREENSHOTS, watchedPage } from '../helpers/browser.js';
import { startTestServer, startUnsealedServer, tempDir } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';

const CONTEXT = { viewport: { width: 1280, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'] };

describe('the web UI at first start: the init screen (ui/pages/init.tsx)', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient };
  let browser: Browser;
  let page: Page;
  const record = { cspViolations: [] as string[], pageErrors: [] as string[] };

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    server = await startTestServer({ ui: true });
    browser = await launchBrowser();
    page = await watchedPage(browser, CONTEXT, record);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the shares in base64 as the CLI prints them (hex in a labelled fold), offers them as a file, and they unseal the server', async () => {
    await page.goto(`${server.address}/ui/`);
    await page.getByLabel('Key shares').fill('3');
    await page.getByLabel('Key threshold').fill('2');
    await page.getByRole('button', { name: 'Initialize' }).click();
    await page.getByRole('heading', { name: 'Keep these safe' }).waitFor();
    const shown = async (label: string) => String(await page.getByLabel(label, { exact: true }).textContent());
    const base64 = await Promise.all([1, 2, 3].map((i) => shown(`Unseal key ${i}`)));
    const hex = await Promise.all([1, 2, 3].map((i) => shown(`Unseal key ${i} (hex)`)));
    const rootToken = await shown('Initial root token');
    expect(base64.every((key) => /^[A-Za-z0-9+/]{40,}={0,2}$/.test(key))).to.equal(true, base64.join());
    expect(base64.map((key) => Buffer.from(key, 'base64').toString('hex'))).to.deep.equal(hex);
    await page.getByText('The same shares in hex').click();
    await page.screenshot({ path: path.join(UI_SCREENSHOTS, '30-init-shares-base64.png'), fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the shares and root token (JSON)' }).click()]);
    expect(download.suggestedFilename()).to.match(/^keywarden-init-\d{8}T\d{6}Z\.json$/);
    const saved = JSON.parse(readFileSync(await download.path(), 'utf8')) as Record<string, unknown>;
    expect(saved).to.deep.equal({ unseal_keys_b64: base64, unseal_keys_hex: hex, unseal_shares: 3, unseal_threshold: 2, root_token: rootToken });

    // The base64 shares are the server's: two of them unseal it.
    await server.client.put('sys/unseal', { key: base64[0] });
    expect((await server.client.put('sys/unseal', { key: base64[2] })).body.sealed).to.equal(false);
    expect(record).to.deep.equal({ cspViolations: [], pageErrors: [] });
  });
});

describe('the web UI is safe for operators (issue #38: ui/pages/*)', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let admin: TestClient;
  let auditDir: { path: string; remove: () => Promise<void> };
  let browser: Browser;
  let page: Page;
  const record = { cspViolations: [] as string[], pageErrors: [] as string[] };

  const shot = (name: string) => page.screenshot({ path: path.join(UI_SCREENSHOTS, `${name}.png`), fullPage: true });
  /** Opens a page afresh (the token stays in the tab), so no test starts from another's state. */
  const open = async (route: string, heading: string) => {
    await page.goto(`${server.address}/ui/#/${route}`);
    await page.reload();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  };
  const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  /** Whether the element is wholly inside the 1280×800 window, as it is drawn now. */
  const inView = async (locator: Locator) => {
    const box = await locator.boundingBox();
    return box !== null && box.x >= 0 && box.y >= 0 && box.x + box.width <= 1280 && box.y + box.height <= 800;
  };
  /** A field's value once it is `expected`, or what it holds after ten seconds (values are properties, which no selector waits on). */
  const settledValue = async (field: Locator, expected: string) => {
    for (let tries = 0; tries < 100 && (await field.inputValue()) !== expected; tries++) await page.waitForTimeout(100);
    return field.inputValue();
  };
  const accessorCount = async () => ((await admin.list('auth/token/accessors')).body.data.keys as string[]).length;

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    auditDir = await tempDir();
    // As a production server runs: its one audit device declared in the configuration, none creatable through the API.
    server = await startUnsealedServer({
      ui: true,
      audit: {
        devices: [
          { path: 'declared-file/', type: 'file', description: 'declared in the test configuration', local: false, options: { file_path: path.join(auditDir.path, 'audit.log') }, declaredAt: 'test.hcl:1' },
        ],
      },
    });
    admin = server.client;
    const ok = (response: { status: number; text: string }) => expect(response.status, response.text).to.be.oneOf([200, 204]);
    ok(await admin.post('sys/mounts/transit', { type: 'transit' }));
    ok(await admin.post('sys/mounts/transit-eu', { type: 'transit' }));
    ok(await admin.post('transit/keys/orders', {}));
    ok(await admin.post('transit/keys/ledger', { type: 'ed25519', exportable: true, allow_plaintext_backup: true }));
    ok(await admin.post('transit-eu/keys/eu-invoices', {}));
    ok(await admin.post('sys/mounts/secret', { type: 'kv', options: { version: '2' } }));
    ok(await admin.post('secret/data/app/db', { data: { password: 'hunter2-not-for-screens', user: 'app' } }));
    ok(await admin.put('sys/policies/acl/orders-app', { policy: 'path "transit/encrypt/orders" { capabilities = ["update"] }' }));
    ok(await admin.post('sys/auth/cloud', { type: 'cloud', description: 'instances and roles' }));
    browser = await launchBrowser();
    page = await watchedPage(browser, CONTEXT, record);
    await page.goto(`${server.address}/ui/`);
    await page.getByLabel('Token', { exact: true }).fill(server.rootToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  });

  afterEach(async function () {
    await page.setViewportSize({ width: 1280, height: 800 });
    if (this.currentTest?.state === 'failed') await shot(`failed-safety-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await auditDir?.remove();
  });

  it('transit tools: the mount and the key are picked from the server\'s lists', async () => {
    await open('transit/tools', 'Transit tools');
    const mount = page.getByLabel('Transit mount');
    const key = page.getByLabel('Key name');
    await key.locator('option', { hasText: 'orders' }).waitFor({ state: 'attached' });
    expect(await mount.locator('option').allTextContents()).to.deep.equal(['transit-eu/', 'transit/']);
    expect(await mount.inputValue()).to.equal('transit');
    expect(await key.locator('option').allTextContents()).to.deep.equal(['ledger', 'orders', 'Another name…']);
    await mount.selectOption('transit-eu');
    await key.locator('option', { hasText: 'eu-invoices' }).waitFor({ state: 'attached' });
    expect(await key.locator('option').allTextContents()).to.deep.equal(['eu-invoices', 'Another name…']);
    // The new mount's keys and the one picked among them arrive in two renders: wait for a pick.
    await page.waitForFunction((select) => {
      const value = (select as { value?: string } | null)?.value;
      return value !== undefined && value !== '';
    }, await key.elementHandle());
    expect(await key.inputValue()).to.equal('eu-invoices');
    await shot('31-transit-tools-pickers');
  });

  it('transit tools: encrypting with an unknown key name asks first; Cancel creates no key, confirming creates it and encrypts', async () => {
    await open('transit/tools', 'Transit tools');
    const key = page.getByLabel('Key name');
    await key.locator('option', { hasText: 'orders' }).waitFor({ state: 'attached' });
    // A key that exists: no question.
    await key.selectOption('orders');
    await page.getByLabel('Plaintext', { exact: true }).fill('order 67');
    await page.getByRole('button', { name: 'Encrypt', exact: true }).last().click();
    const first = String(await page.getByLabel('ciphertext', { exact: true }).textContent());
    expect(first).to.match(/^vault:v1:/);

    await key.selectOption({ label: 'Another name…' });
    await page.getByLabel('Other key name').fill('ordrs');
    await page.getByRole('button', { name: 'Encrypt', exact: true }).last().click();
    const dialog = page.getByRole('dialog', { name: 'Confirm: Encrypt' });
    await dialog.waitFor();
    expect(await dialog.textContent()).to.contain('There is no key named "ordrs" on transit/. Encrypting creates a new aes256-gcm96 key');
    await shot('32-transit-encrypt-asks-first');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await admin.get('transit/keys/ordrs')).status).to.equal(404);

    await page.getByRole('button', { name: 'Encrypt', exact: true }).last().click();
    await dialog.getByRole('button', { name: 'Create the key and encrypt' }).click();
    // The answer replaces the first ciphertext (also 'order 67', under the other key): read once it has.
    let ciphertext = first;
    for (let tries = 0; ciphertext === first && tries < 150; tries++) {
      await page.waitForTimeout(100);
      ciphertext = String(await page.getByLabel('ciphertext', { exact: true }).textContent());
    }
    const decrypted = await admin.post('transit/decrypt/ordrs', { ciphertext });
    expect(Buffer.from(decrypted.body.data.plaintext as string, 'base64').toString()).to.equal('order 67');
    // The new key is now in the list, and picked there.
    await key.locator('option', { hasText: 'ordrs' }).waitFor({ state: 'attached' });
    expect(await key.inputValue()).to.equal('ordrs');
  });

  it('transit keys: the chosen key\'s details open beside the list, in view at 1280×800', async () => {
    await open('transit/keys', 'Transit keys');
    await page.getByRole('button', { name: 'orders', exact: true }).click();
    const detail = page.getByRole('region', { name: 'Key orders' });
    await detail.getByText('aes256-gcm96').waitFor();
    expect(await page.evaluate<number>('scrollY')).to.equal(0);
    expect(await inView(detail.getByRole('heading', { name: 'Key orders' }))).to.equal(true);
    expect(await inView(detail.locator('dl'))).to.equal(true);
    expect(await inView(detail.getByRole('button', { name: 'Rotate' }))).to.equal(true);
    await shot('33-transit-key-detail-in-view');
  });

  it('transit keys: "Download backup" is offered only for a key that allows a backup (exportable and allow_plaintext_backup)', async () => {
    await open('transit/keys', 'Transit keys');
    await page.getByRole('button', { name: 'orders', exact: true }).click();
    const orders = page.getByRole('region', { name: 'Key orders' });
    await orders.getByText('No backup can be taken').waitFor();
    expect(await orders.getByRole('button', { name: 'Download backup' }).count()).to.equal(0);

    await page.getByRole('button', { name: 'ledger', exact: true }).click();
    const ledger = page.getByRole('region', { name: 'Key ledger' });
    const [download] = await Promise.all([page.waitForEvent('download'), ledger.getByRole('button', { name: 'Download backup' }).click()]);
    expect(download.suggestedFilename()).to.equal('ledger.backup');
    const backup = readFileSync(await download.path(), 'utf8');
    expect((await admin.post('transit/restore/ledger-restored', { backup })).status).to.be.oneOf([200, 204]);
    expect((await admin.get('transit/keys/ledger-restored')).body.data.type).to.equal('ed25519');
    await shot('34-transit-backup-only-when-allowed');
  });

  it('kv: values stay masked until shown, and the new-version form does not hold them in clear', async () => {
    await section('KV secrets').click();
    await page.getByRole('button', { name: 'app/', exact: true }).click();
    await page.getByRole('button', { name: 'db', exact: true }).click();
    const detail = page.getByRole('region', { name: 'Secret app/db' });
    await detail.getByRole('heading', { name: 'Version 1 (current)' }).waitFor();
    await detail.getByRole('row').filter({ hasText: 'password' }).waitFor();
    expect(await page.locator('main').textContent()).not.to.contain('hunter2-not-for-screens');
    // The new version starts from the current data, each value in a password field.
    expect(await detail.getByLabel('Key 1', { exact: true }).inputValue()).to.equal('password');
    expect(await detail.getByLabel('Value 1', { exact: true }).getAttribute('type')).to.equal('password');
    expect(await detail.getByLabel('Value 2', { exact: true }).getAttribute('type')).to.equal('password');
    const clearFields = detail.locator('input:not([type="password"]), textarea');
    expect(await clearFields.evaluateAll((fields) => fields.map((field) => (field as { value: string }).value))).not.to.include('hunter2-not-for-screens');
    await shot('35-kv-masked');

    const row = detail.getByRole('row').filter({ hasText: 'password' });
    await row.getByRole('button', { name: 'Copy password to clipboard' }).click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).to.equal('hunter2-not-for-screens');
    await row.getByRole('button', { name: 'Show password' }).click();
    await row.getByText('hunter2-not-for-screens').waitFor();
    await row.getByRole('button', { name: 'Hide password' }).click();
    await row.getByText('hunter2-not-for-screens').waitFor({ state: 'detached' });
  });

  it('kv: a key/value editor beside raw JSON; either writes the data, and a key given twice is refused before anything is sent', async () => {
    await open('kv', 'KV secrets');
    const form = page.getByRole('region', { name: 'Write a new secret' });
    await form.getByRole('radio', { name: 'Key/value' }).check();
    await form.getByLabel('Secret path').fill('app/api');
    await form.getByLabel('Key 1', { exact: true }).fill('token');
    await form.getByLabel('Value 1', { exact: true }).fill('t-1');
    await form.getByRole('button', { name: 'Add a key' }).click();
    await form.getByLabel('Key 2', { exact: true }).fill('token');
    await form.getByLabel('Value 2', { exact: true }).fill('t-2');
    await form.getByRole('button', { name: 'Create secret' }).click();
    await form.getByRole('alert').filter({ hasText: 'data: the key "token" is given twice' }).waitFor();
    expect((await admin.get('secret/data/app/api')).status).to.equal(404);
    await form.getByLabel('Key 2', { exact: true }).fill('url');
    await form.getByLabel('Value 2', { exact: true }).fill('https://api.example');
    await form.getByRole('button', { name: 'Create secret' }).click();
    const detail = page.getByRole('region', { name: 'Secret app/api' });
    await detail.waitFor();
    expect((await admin.get('secret/data/app/api')).body.data.data).to.deep.equal({ token: 't-1', url: 'https://api.example' });

    // The same data as JSON, switched to on purpose; edited there and saved as the next version.
    await detail.getByRole('radio', { name: 'JSON' }).check();
    const json = detail.getByLabel('Data of the new version (JSON)');
    expect(JSON.parse(await json.inputValue())).to.deep.equal({ token: 't-1', url: 'https://api.example' });
    await json.fill('{"token": "t-2", "retries": 3}');
    await shot('36-kv-editor-json');
    await detail.getByRole('radio', { name: 'Key/value' }).check();
    expect(await detail.getByLabel('Key 2', { exact: true }).inputValue()).to.equal('retries');
    await detail.getByRole('button', { name: 'Save new version' }).click();
    await detail.getByRole('heading', { name: 'Version 2 (current)' }).waitFor();
    expect((await admin.get('secret/data/app/api')).body.data.data).to.deep.equal({ token: 't-2', retries: 3 });
  });

  it('kv: a secret\'s details open beside the list, in view at 1280×800', async () => {
    await section('Dashboard').click();
    await section('KV secrets').click();
    await page.getByRole('button', { name: 'app/', exact: true }).click();
    await page.getByRole('button', { name: 'db', exact: true }).click();
    const detail = page.getByRole('region', { name: 'Secret app/db' });
    await detail.getByRole('heading', { name: 'Version 1 (current)' }).waitFor();
    expect(await page.evaluate<number>('scrollY')).to.equal(0);
    expect(await inView(detail.getByRole('heading', { name: 'Secret app/db' }))).to.equal(true);
    expect(await inView(detail.getByRole('table', { name: 'Versions' }))).to.equal(true);
    expect(await inView(detail.getByRole('table', { name: 'Data of version 1' }))).to.equal(true);
    await shot('37-kv-detail-in-view');
  });

  it('kv: a link names the mount, folder and secret; opening it shows that secret, and browsing changes it', async () => {
    await page.goto(`${server.address}/ui/#/kv/secret/app/db`);
    await page.getByRole('region', { name: 'Secret app/db' }).getByRole('heading', { name: 'Version 1 (current)' }).waitFor();
    await page.getByRole('region', { name: 'Browse secret/app/' }).waitFor();
    await page.getByRole('link', { name: /Up to secret\// }).click();
    await page.getByRole('region', { name: 'Browse secret/' }).waitFor();
    expect(await page.evaluate<string>('location.hash')).to.equal('#/kv/secret/');
    await page.getByRole('button', { name: 'app/', exact: true }).click();
    expect(await page.evaluate<string>('location.hash')).to.equal('#/kv/secret/app/');
    await page.getByRole('button', { name: 'db', exact: true }).click();
    await page.getByRole('region', { name: 'Secret app/db' }).waitFor();
    expect(await page.evaluate<string>('location.hash')).to.equal('#/kv/secret/app/db');
    // The browser's back button goes back along the same path.
    await page.goBack();
    await page.getByRole('region', { name: 'Browse secret/app/' }).waitFor();
    expect(await page.getByRole('region', { name: /^Secret / }).count()).to.equal(0);
    // A link to a mount that is not there says so.
    await page.goto(`${server.address}/ui/#/kv/nowhere/x`);
    await page.getByRole('alert').filter({ hasText: 'No kv secrets engine is mounted at nowhere/' }).waitFor();
  });

  it('policies: a long line wraps in the editor, its number beside it, instead of being cut off', async () => {
    const long = `path "secret/data/${'team/'.repeat(30)}*" { capabilities = ["create", "read", "update", "delete", "list"] }`;
    expect((await admin.put('sys/policies/acl/long-lines', { policy: `${long}\n# next\n` })).status).to.equal(204);
    await open('policies', 'Policies');
    await page.getByRole('button', { name: 'long-lines', exact: true }).click();
    const editor = page.getByLabel('Policy (HCL)');
    await page.locator('.editor .text', { hasText: '# next' }).waitFor();
    const sizes = await editor.evaluate((area) => {
      const box = area as unknown as { scrollWidth: number; clientWidth: number; scrollHeight: number; clientHeight: number };
      return { hiddenWide: box.scrollWidth - box.clientWidth, hiddenTall: box.scrollHeight - box.clientHeight };
    });
    expect(sizes).to.deep.equal({ hiddenWide: 0, hiddenTall: 0 });
    // Line 2's number sits level with the text of line 2, below the wrapped line 1.
    const numbers = page.locator('.editor .number');
    const texts = page.locator('.editor .text');
    const [line1, number2, text2] = await Promise.all([texts.nth(0).boundingBox(), numbers.nth(1).boundingBox(), texts.nth(1).boundingBox()]);
    expect(line1!.height).to.be.above(2 * number2!.height);
    expect(number2!.y).to.be.closeTo(text2!.y, 1);
    await shot('38-policy-long-line');
  });

  it('policies: root is listed as built in, not offered for editing', async () => {
    await open('policies', 'Policies');
    const list = page.getByRole('region', { name: 'ACL policies' });
    await list.getByText('(built in: every capability; cannot be edited)').waitFor();
    expect(await list.getByRole('button', { name: 'root', exact: true }).count()).to.equal(0);
    expect(await list.getByRole('button', { name: 'default', exact: true }).count()).to.equal(1);
  });

  it('tokens: a policy that does not exist is flagged, and creating the token with it asks first', async () => {
    await open('tokens', 'Tokens');
    await page.getByLabel('Policies').fill('orders-app, orders-ap');
    await page.getByText('No policy named "orders-ap" exists.').waitFor();
    const before = await accessorCount();
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm: Create token' });
    await dialog.waitFor();
    expect(await dialog.textContent()).to.contain('No policy named "orders-ap" exists.');
    await shot('39-token-unknown-policy');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await accessorCount()).to.equal(before);
    // Named policies that exist create it at once.
    await page.getByLabel('Policies').fill('orders-app');
    await page.getByText('No policy named').waitFor({ state: 'detached' });
    expect(await page.getByText('No policy named').count()).to.equal(0);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText(/^Policies: default, orders-app; TTL/).waitFor();
    expect(await accessorCount()).to.equal(before + 1);
  });

  it('durations show as typed: a token\'s TTL "1h", a mount tuned to "1h", a key rotated every "720h", a role\'s token TTL "2h"', async () => {
    await open('tokens', 'Tokens');
    await page.getByLabel('Policies').fill('orders-app');
    await page.getByLabel('TTL').fill('1h');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('Policies: default, orders-app; TTL 1h').waitFor();

    expect((await admin.post('sys/mounts/transit/tune', { default_lease_ttl: '1h', max_lease_ttl: '90m' })).status).to.equal(204);
    await open('secrets', 'Secrets engines');
    const transit = page.getByRole('row').filter({ hasText: 'transit/' });
    await transit.getByText('1h / 1h30m').waitFor();
    await transit.getByRole('button', { name: 'Tune' }).click();
    expect(await page.getByLabel('Default lease TTL').inputValue()).to.equal('1h');

    expect((await admin.post('transit/keys/orders/config', { auto_rotate_period: '720h' })).status).to.be.oneOf([200, 204]);
    await open('transit/keys', 'Transit keys');
    await page.getByRole('button', { name: 'orders', exact: true }).click();
    const detail = page.getByRole('region', { name: 'Key orders' });
    await detail.getByRole('definition').filter({ hasText: /^720h$/ }).waitFor();
    await detail.getByText('Configuration', { exact: true }).click();
    expect(await detail.getByLabel('Auto-rotate period').inputValue()).to.equal('720h');

    const role = { auth_type: 'iam', bound_iam_principal_arn: ['arn:aws:iam::123456789012:role/web'], resolve_cloud_unique_ids: false, token_ttl: '2h', token_max_ttl: '36h' };
    expect((await admin.post('auth/cloud/role/web', role)).status).to.equal(204);
    await open('cloud', 'Cloud auth');
    await page.getByRole('button', { name: 'web', exact: true }).click();
    expect(await settledValue(page.getByLabel('token_ttl', { exact: true }), '2h')).to.equal('2h');
    expect(await page.getByLabel('token_max_ttl', { exact: true }).inputValue()).to.equal('36h');
  });

  it('at 390 px the navigation is one row and every mount\'s row, its actions too, fits the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await open('secrets', 'Secrets engines');
    const links = page.getByRole('navigation', { name: 'Sections' }).getByRole('link');
    const tops = await links.evaluateAll((all) => all.map((link) => Math.round((link as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect().top)));
    expect(new Set(tops).size).to.equal(1);
    // The current section is scrolled into the row.
    expect(await inView(page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Secrets engines' }))).to.equal(true);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
    const transit = page.getByRole('row').filter({ hasText: 'transit-eu/' });
    for (const name of ['Tune', 'Reload', 'Disable']) {
      const button = transit.getByRole('button', { name });
      await button.scrollIntoViewIfNeeded();
      const box = (await button.boundingBox())!;
      expect(box.x, name).to.be.at.least(0);
      expect(box.x + box.width, name).to.be.at.most(390);
    }
    await shot('40-secrets-engines-390px');
    await section('Dashboard').click();
    await page.getByRole('region', { name: 'Auth methods' }).getByText('cloud/').waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
    await shot('41-dashboard-390px');
  });

  it('dashboard: the request-rate chart is large enough to read, with a rate axis and a time axis', async () => {
    await open('dashboard', 'Dashboard');
    const chart = page.getByRole('region', { name: 'Request rate' });
    const box = (await chart.locator('svg.sparkline').boundingBox())!;
    expect(box.width).to.be.at.least(600);
    expect(box.height).to.be.at.least(150);
    const rates = await chart.locator('.chart-y span').allTextContents();
    expect(rates).to.have.length(3);
    expect(rates.every((text) => /^\d+(\.\d)?\/s$/.test(text))).to.equal(true, rates.join());
    expect(rates[2]).to.equal('0/s');
    expect(await chart.locator('.chart-x span').allTextContents()).to.deep.equal(['2 min ago', '1 min ago', 'now']);
    await shot('42-dashboard-chart');
  });

  it('dashboard: lists the auth methods', async () => {
    await open('dashboard', 'Dashboard');
    const auth = page.getByRole('region', { name: 'Auth methods' });
    const cloud = auth.getByRole('row').filter({ hasText: 'cloud/' });
    await cloud.waitFor();
    expect(await cloud.getByRole('cell').allTextContents()).to.deep.equal(['cloud/', 'cloud', (await admin.get('sys/auth')).body.data['cloud/'].accessor, 'instances and roles']);
    await auth.getByRole('row').filter({ hasText: 'token/' }).waitFor();
  });

  it('audit devices: a server that creates none through the API shows its declared devices and says where one is declared, with no form', async () => {
    await open('audit', 'Audit devices');
    const row = page.getByRole('row').filter({ hasText: 'declared-file/' });
    await row.getByText('in the configuration file').waitFor();
    expect(await row.getByRole('button', { name: 'Disable' }).count()).to.equal(0);
    const help = page.getByRole('region', { name: 'Adding an audit device' });
    await help.getByText('unsafe_allow_api_audit_creation').first().waitFor();
    expect(await help.textContent()).to.contain('audit "file" "file" {');
    expect(await page.getByRole('button', { name: 'Enable', exact: true }).count()).to.equal(0);
    expect(await page.getByRole('alert').count()).to.equal(0);
    await shot('43-audit-declared');
  });

  it('broke none of the Content-Security-Policy and threw no page error', () => {
    expect(record).to.deep.equal({ cspViolations: [], pageErrors: [] });
  });
});
