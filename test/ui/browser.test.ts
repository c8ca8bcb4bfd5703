/**
 * The operator UI in headless Chromium against a real server, as an operator would use it: init,
 * unseal and sign in; mount transit, create a key, encrypt and decrypt, batch-encrypt an uploaded
 * file; write a policy and create a token with it; sign in with that token and see only what it
 * allows. A screenshot of each screen goes to test-output/ui/.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, UI_SCREENSHOTS, watchedPage } from '../helpers/browser.js';
import { API_AUDIT, startTestServer, tempDir } from '../helpers/server.js';
import { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';


describe('the web UI in a real browser (ui/)', function () {
  this.timeout(120_000);
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  let keys: string[] = [];
  let rootToken = '';
  let appToken = '';

  const shot = (name: string) => page.screenshot({ path: path.join(UI_SCREENSHOTS, `${name}.png`), fullPage: true });
  const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    server = await startTestServer({ ui: true, audit: API_AUDIT });
    browser = await launchBrowser();
    page = await watchedPage(browser, { viewport: { width: 1280, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'] }, { cspViolations, pageErrors });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await shot(`failed-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('1. initializes with chosen shares and threshold, shows the shares once, unseals with progress, and signs in', async () => {
    await page.goto(`${server.address}/`);
    expect(new URL(page.url()).pathname).to.equal('/ui/');
    await page.getByRole('heading', { name: 'Initialize Keywarden' }).waitFor();
    await page.getByLabel('Key shares').fill('3');
    await page.getByLabel('Key threshold').fill('2');
    await shot('01-init');
    await page.getByRole('button', { name: 'Initialize' }).click();
    await page.getByRole('heading', { name: 'Keep these safe' }).waitFor();
    keys = await Promise.all([1, 2, 3].map((i) => page.getByLabel(`Unseal key ${i}`, { exact: true }).textContent().then(String)));
    rootToken = String(await page.getByLabel('Initial root token', { exact: true }).textContent());
    // Shown as the CLI prints them: base64.
    expect(keys.every((key) => /^[A-Za-z0-9+/]{40,}={0,2}$/.test(key))).to.equal(true, keys.join());
    expect(rootToken).to.match(/^(hvs|s)\./);
    await shot('02-init-shares');
    await page.getByRole('button', { name: /I have stored them/ }).click();

    await page.getByRole('heading', { name: 'Unseal' }).waitFor();
    // The shares are gone from the page once the operator moves on.
    expect(await page.content()).not.to.contain(keys[0]);
    await page.getByLabel('Unseal key share').fill('not a share');
    await page.getByRole('button', { name: 'Unseal' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/./);
    await page.getByLabel('Unseal key share').fill(keys[0]!);
    await page.getByRole('button', { name: 'Unseal' }).click();
    await page.getByText('1 of 2 key shares given').waitFor();
    await shot('03-unseal-progress');
    await page.getByLabel('Unseal key share').fill(keys[2]!);
    await page.getByRole('button', { name: 'Unseal' }).click();

    // Signing in by keyboard alone: the heading has focus, Tab reaches the method picker (Token chosen), Tab again the token field, Enter submits.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot('04-login');
    await page.getByLabel('Token', { exact: true }).fill('not-a-token');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.contain('permission denied');
    await page.getByLabel('Token', { exact: true }).fill('');
    await page.getByRole('heading', { name: 'Sign in' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.tagName')).to.equal('SELECT');
    await page.keyboard.press('Tab');
    await page.keyboard.type(rootToken);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByText('unsealed', { exact: true }).waitFor();
    expect(await page.evaluate<string>('location.href')).not.to.contain(rootToken);
    expect(await page.evaluate<string>('JSON.stringify(localStorage)')).not.to.contain(rootToken);
    await shot('05-dashboard');
  });

  it('2. mounts transit, creates a key, round-trips encrypt and decrypt, and batch-encrypts an uploaded file', async () => {
    await section('Secrets engines').click();
    await page.getByRole('heading', { name: 'Secrets engines', level: 1 }).waitFor();
    await page.getByLabel('Type', { exact: true }).fill('transit');
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('cell', { name: 'transit/', exact: true }).waitFor();
    // Enabling it twice shows the server's own message.
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/transit/);
    await shot('06-secrets-engines');

    await section('Transit keys').click();
    await page.getByRole('heading', { name: 'Transit keys' }).waitFor();
    await page.getByLabel('Name', { exact: true }).first().fill('orders');
    await page.getByLabel('Type', { exact: true }).selectOption('aes256-gcm96');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key orders' }).waitFor();
    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.getByText('Rotated orders').waitFor();
    const versionRows = page.getByRole('region', { name: 'Key orders' }).locator('tbody tr');
    await versionRows.nth(1).waitFor();
    expect(await versionRows.count()).to.equal(2);
    expect(await versionRows.first().textContent()).to.match(/^1\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    // A destructive action asks first; Escape cancels it and the key stays.
    await page.getByRole('button', { name: 'Delete key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).to.contain('Delete orders');
    await shot('07-confirm-delete');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    const admin = new TestClient(server.address, rootToken);
    expect((await admin.get('transit/keys/orders')).status).to.equal(200);
    await shot('08-transit-keys');

    await section('Transit tools').click();
    await page.getByRole('heading', { name: 'Transit tools' }).waitFor();
    await page.getByLabel('Key name').selectOption('orders');
    await page.getByLabel('Plaintext', { exact: true }).fill('order 66: two coffees');
    await page.getByRole('button', { name: 'Encrypt', exact: true }).last().click();
    const ciphertext = String(await page.getByLabel('ciphertext', { exact: true }).textContent());
    expect(ciphertext).to.match(/^vault:v2:/);
    await page.locator('.output').filter({ has: page.getByLabel('ciphertext', { exact: true }) }).getByRole('button', { name: 'Copy to clipboard' }).click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).to.equal(ciphertext);
    // The tool tabs work from the keyboard: an arrow key moves to the next tool and focuses it.
    await page.getByRole('tab', { name: 'Encrypt' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('[role="tab"][aria-selected="true"]:focus', { hasText: 'Decrypt' }).waitFor();
    await page.getByLabel('Ciphertext', { exact: true }).fill(ciphertext);
    await page.getByRole('button', { name: 'Decrypt', exact: true }).last().click();
    expect(await page.getByLabel('plaintext', { exact: true }).textContent()).to.equal('order 66: two coffees');

    await page.getByRole('tab', { name: 'Encrypt' }).click();
    const items = ['first line', 'second line', 'third: grüße, naïve'];
    await page.getByLabel('Upload Plaintext as a file').setInputFiles({ name: 'items.txt', mimeType: 'text/plain', buffer: Buffer.from(`${items.join('\n')}\n`) });
    await page.getByRole('button', { name: 'Encrypt', exact: true }).last().click();
    await page.getByLabel('ciphertext 3', { exact: true }).waitFor();
    const batch = await Promise.all([1, 2, 3].map((i) => page.getByLabel(`ciphertext ${i}`, { exact: true }).textContent().then(String)));
    await shot('09-transit-tools-batch');
    const decrypted = await admin.post('transit/decrypt/orders', { batch_input: batch.map((c) => ({ ciphertext: c })) });
    expect(decrypted.body.data.batch_results.map((r: { plaintext: string }) => Buffer.from(r.plaintext, 'base64').toString('utf8'))).to.deep.equal(items);
  });

  it('3. writes a policy (a syntax error is marked at its line) and creates a token with it', async () => {
    await section('Policies').click();
    await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('orders-app');
    const editor = page.getByLabel('Policy (HCL)');
    await editor.fill('path "transit/encrypt/orders" {\n  capabilities = ["update"]\n}\npath "transit/decrypt/orders" {\n  capabilities = ["update"\n}\n');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText(/problem on line \d+/).waitFor();
    const marked = Number(await page.locator('.gutter .bad-line').textContent());
    expect(marked).to.be.within(5, 6);
    expect(await page.getByRole('alert').textContent()).to.contain(`line ${marked}`);
    await shot('10-policy-error');
    await editor.fill('path "transit/encrypt/orders" {\n  capabilities = ["update"]\n}\npath "transit/decrypt/orders" {\n  capabilities = ["update"]\n}\n');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved orders-app').waitFor();
    await page.getByLabel('Path', { exact: true }).fill('transit/encrypt/orders');
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await page.getByText(/Capabilities on/).waitFor();
    await shot('11-policies');

    await section('Tokens').click();
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();
    await page.getByLabel('Policies').fill('orders-app');
    await page.getByLabel('TTL').fill('1h');
    await page.getByRole('button', { name: 'Create token' }).click();
    appToken = String(await page.getByLabel('Token', { exact: true }).last().textContent());
    expect(appToken).to.match(/^(hvs|s)\./);
    await shot('12-tokens');
    const lookup = await new TestClient(server.address, rootToken).post('auth/token/lookup', { token: appToken });
    expect(lookup.body.data.policies).to.deep.equal(['default', 'orders-app']);
    expect(lookup.body.data.ttl).to.be.within(3500, 3600);
  });

  it('4. signs in with that token and shows only what its policy allows', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);
    await page.getByLabel('Token', { exact: true }).fill(appToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    // The token stays for this tab: a reload keeps the session, checked again with the server.
    await page.reload();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const nav = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();
    expect(nav).to.deep.equal(['Dashboard', 'Transit keys', 'Transit tools']);
    await page.getByText('Your token may not list the secrets engines.').waitFor();

    await section('Transit keys').click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.contain('permission denied');

    await section('Transit tools').click();
    await page.getByLabel('Key name').fill('orders');
    await page.getByLabel('Plaintext', { exact: true }).fill('allowed');
    await page.getByRole('button', { name: 'Encrypt', exact: true }).last().click();
    expect(String(await page.getByLabel('ciphertext', { exact: true }).textContent())).to.match(/^vault:v2:/);
    await page.getByRole('tab', { name: 'HMAC' }).click();
    await page.getByLabel('Input', { exact: true }).fill('not allowed');
    await page.getByRole('button', { name: 'HMAC', exact: true }).last().click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.contain('permission denied');
    await shot('13-limited-token');
  });

  it('works at 390 px wide', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await section('Dashboard').click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    // Nothing sticks out sideways: the page is no wider than the screen.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
    await shot('14-dashboard-390px');
    await section('Transit tools').click();
    await page.getByRole('heading', { name: 'Transit tools' }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
    await shot('15-transit-tools-390px');
  });

  it('5. cloud auth: bound_* values are checked before they are sent, the server\'s own refusals are shown, deleting a role asks first', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    const admin = new TestClient(server.address, rootToken);
    expect((await admin.post('sys/auth/cloud', { type: 'cloud' })).status).to.equal(204);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token', { exact: true }).fill(rootToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await section('Cloud auth').click();
    await page.getByRole('heading', { name: 'Cloud auth' }).waitFor();

    await page.getByLabel('Role name').fill('web');
    await page.getByLabel('bound_account_id', { exact: true }).fill('12345');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('bound_account_id: "12345" does not look like 123456789012').waitFor();
    expect((await admin.get('auth/cloud/role/web')).status).to.equal(404);

    // Well-formed, but a constraint the iam auth type does not check: the server's own message is shown.
    await page.getByLabel('bound_account_id', { exact: true }).fill('');
    await page.getByLabel('bound_vpc_id', { exact: true }).fill('vpc-0abc1234');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('alert').filter({ hasText: 'bound_vpc_id' }).waitFor();
    expect((await admin.get('auth/cloud/role/web')).status).to.equal(404);

    await page.getByLabel('bound_vpc_id', { exact: true }).fill('');
    await page.getByLabel('bound_iam_principal_arn', { exact: true }).fill('arn:aws:iam::123456789012:role/web');
    await page.getByLabel('token_policies', { exact: true }).fill('orders-app');
    // No provider keys are configured here, so the server must not try to look the principal up.
    await page.getByRole('checkbox', { name: /resolve_cloud_unique_ids/ }).uncheck();
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved web').waitFor();
    const role = await admin.get('auth/cloud/role/web');
    expect(role.body.data.bound_iam_principal_arn).to.deep.equal(['arn:aws:iam::123456789012:role/web']);
    expect(role.body.data.token_policies).to.deep.equal(['orders-app']);
    await shot('16-cloud-auth');

    await page.getByRole('button', { name: 'Delete web' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('button', { name: 'Delete web' }).waitFor({ state: 'detached' });
    expect((await admin.get('auth/cloud/role/web')).status).to.equal(404);
  });

  it('6. audit devices: enables a file device, and disables it only after confirming', async () => {
    const dir = await tempDir();
    try {
      const admin = new TestClient(server.address, rootToken);
      await section('Audit devices').click();
      await page.getByRole('heading', { name: 'Audit devices' }).waitFor();
      await page.getByLabel('File path').fill(path.join(dir.path, 'audit.log'));
      await page.getByRole('button', { name: 'Enable', exact: true }).click();
      await page.getByRole('cell', { name: 'file/', exact: true }).waitFor();
      expect(Object.keys((await admin.get('sys/audit')).body.data ?? {})).to.deep.equal(['file/']);
      await shot('17-audit-devices');
      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expect(Object.keys((await admin.get('sys/audit')).body.data ?? {})).to.deep.equal(['file/']);
      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('No audit device is enabled.').waitFor();
      expect(Object.keys((await admin.get('sys/audit')).body.data ?? {})).to.deep.equal([]);
    } finally {
      await dir.remove();
    }
  });

  it('7. secrets engines: tunes a mount', async () => {
    const admin = new TestClient(server.address, rootToken);
    await section('Secrets engines').click();
    await page.getByRole('row').filter({ hasText: 'transit/' }).getByRole('button', { name: 'Tune' }).click();
    await page.getByRole('heading', { name: 'Tune transit/' }).waitFor();
    await page.getByLabel('Default lease TTL').fill('1h');
    await page.getByRole('button', { name: 'Save tuning' }).click();
    await page.getByRole('heading', { name: 'Tune transit/' }).waitFor({ state: 'detached' });
    expect((await admin.get('sys/mounts/transit/tune')).body.data.default_lease_ttl).to.equal(3600);
  });
  it('8. transit keys: configure, export, download a backup, restore it under another name, trim, and delete after confirming', async () => {
    const admin = new TestClient(server.address, rootToken);
    await section('Transit keys').click();
    await page.getByLabel('Name', { exact: true }).first().fill('ledger');
    await page.getByLabel('Type', { exact: true }).selectOption('ed25519');
    await page.getByText('Exportable (cannot be undone)').click();
    await page.getByText('Allow plaintext backup (cannot be undone)').click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const detail = page.getByRole('region', { name: 'Key ledger' });
    await detail.waitFor();
    expect((await admin.get('transit/keys/ledger')).body.data).to.include({ type: 'ed25519', exportable: true, allow_plaintext_backup: true });

    await detail.getByLabel('Export', { exact: true }).selectOption('public-key');
    await detail.getByRole('button', { name: 'Export', exact: true }).click();
    const exported = JSON.parse(String(await page.getByLabel('Exported keys', { exact: true }).textContent())) as Record<string, string>;
    expect(exported['1']).to.equal((await admin.get('transit/keys/ledger')).body.data.keys['1'].public_key);

    const [download] = await Promise.all([page.waitForEvent('download'), detail.getByRole('button', { name: 'Download backup' }).click()]);
    expect(download.suggestedFilename()).to.equal('ledger.backup');
    const backupFile = await download.path();
    await page.getByLabel('Backup file').setInputFiles(backupFile);
    await page.getByRole('region', { name: 'Restore a backup' }).getByLabel('Name', { exact: true }).fill('ledger-copy');
    await page.getByRole('button', { name: 'Restore', exact: true }).click();
    await page.getByText('Restored').waitFor();
    expect((await admin.get('transit/keys/ledger-copy')).body.data.type).to.equal('ed25519');
    // Restoring over an existing key replaces it: that asks first.
    await page.getByRole('checkbox', { name: 'Replace an existing key of that name' }).check();
    await page.getByRole('button', { name: 'Restore', exact: true }).click();
    await page.getByRole('dialog', { name: 'Confirm: Restore' }).getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog', { name: 'Confirm: Restore' }).waitFor({ state: 'hidden' });

    await page.getByRole('button', { name: 'ledger', exact: true }).click();
    await detail.getByRole('button', { name: 'Rotate' }).click();
    await detail.locator('tbody tr').nth(1).waitFor();
    await detail.getByText('Configuration', { exact: true }).click();
    // Trimming needs both minimums raised (the server says so otherwise).
    await detail.getByLabel('Min decryption version').fill('2');
    await detail.getByLabel('Min encryption version').fill('2');
    await detail.getByRole('checkbox', { name: 'Deletion allowed' }).check();
    await detail.getByRole('button', { name: 'Save configuration' }).click();
    await detail.getByText('2 / 2').waitFor();
    await detail.getByLabel('Trim: keep versions from').fill('2');
    await detail.getByRole('button', { name: 'Trim' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await detail.getByText('Trimmed ledger').waitFor();
    expect(Object.keys((await admin.get('transit/keys/ledger')).body.data.keys)).to.deep.equal(['2']);
    await shot('18-transit-key-lifecycle');

    await detail.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await detail.waitFor({ state: 'detached' });
    expect((await admin.get('transit/keys/ledger')).status).to.equal(404);
  });

  it('9. tokens: looks one up by accessor, and revokes it only after confirming', async () => {
    const admin = new TestClient(server.address, rootToken);
    const created = await admin.post('auth/token/create', { policies: ['orders-app'], display_name: 'batch-job', ttl: '2h' });
    const { accessor, client_token: token } = created.body.auth as { accessor: string; client_token: string };
    await section('Tokens').click();
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();
    await page.getByLabel('Accessor', { exact: true }).fill(accessor);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('token-batch-job').waitFor();
    await page.getByRole('definition').filter({ hasText: 'default, orders-app' }).waitFor();
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('Revoked', { exact: true }).waitFor();
    expect((await admin.post('auth/token/lookup', { token })).status).to.equal(403);
  });

  it('runs under its Content-Security-Policy: the app broke none of it on any screen above, and an injected inline script is blocked', async () => {
    expect(cspViolations).to.deep.equal([]);
    expect(pageErrors).to.deep.equal([]);
    // Page code is given as text: the tests compile without the DOM's types.
    const blocked = await page.evaluate<{ ran: boolean; violated: string }>(`new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (event) => resolve({ ran: Boolean(window.injected), violated: event.violatedDirective }), { once: true });
      const script = document.createElement('script');
      script.textContent = 'window.injected = true';
      document.head.append(script);
    })`);
    expect(blocked).to.deep.equal({ ran: false, violated: 'script-src-elem' });
  });
});
