/**
 * The web UI's screens the first browser tests left out, in headless Chromium against a real
 * server: cloud auth's client and identity configuration, its deny list and tidy; reloading and
 * disabling a mount; deleting a policy; looking a token up by the token itself; and the transit
 * tools' success paths (HMAC, sign and verify, rewrap, data key, hash, random). Each result is
 * checked against the server. A screenshot of each screen goes to test-output/ui/.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, UI_SCREENSHOTS, watchedPage } from '../helpers/browser.js';
import { startUnsealedServer } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';


describe('the web UI in a real browser: configuration, lists and tools (ui/pages/*)', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let browser: Browser;
  let page: Page;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(UI_SCREENSHOTS, `${name}.png`), fullPage: true });
  const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const confirm = () => page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
  const output = async (label: string) => String(await page.getByLabel(label, { exact: true }).textContent());

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    server = await startUnsealedServer({ ui: true });
    const admin = server.client;
    expect((await admin.post('sys/auth/cloud', { type: 'cloud' })).status).to.equal(204);
    expect((await admin.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
    expect((await admin.post('transit/keys/orders', { type: 'aes256-gcm96' })).status).to.be.oneOf([200, 204]);
    expect((await admin.post('transit/keys/signer', { type: 'ed25519' })).status).to.be.oneOf([200, 204]);
    browser = await launchBrowser();
    page = await watchedPage(browser, { viewport: { width: 1280, height: 900 } }, { cspViolations, pageErrors });
    await page.goto(`${server.address}/ui/`);
    await page.getByLabel('Token', { exact: true }).fill(server.rootToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await shot(`failed-screens-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('cloud auth: saves the client and identity configuration (the secret key never shown back), and refuses a bad alias with the server\'s message', async () => {
    const admin = server.client;
    await section('Cloud auth').click();
    await page.getByRole('heading', { name: 'Cloud auth' }).waitFor();
    const client = page.getByRole('region', { name: 'Client configuration' });
    await client.getByLabel('access_key', { exact: true }).fill('AKIAEXAMPLE');
    await client.getByLabel('secret_key', { exact: true }).fill('very-secret-key');
    await client.getByLabel('sts_region', { exact: true }).fill('eu-west-1');
    await client.getByRole('button', { name: 'Save' }).click();
    await client.getByText('Saved').waitFor();
    const saved = (await admin.get('auth/cloud/config/client')).body.data;
    expect(saved).to.include({ access_key: 'AKIAEXAMPLE', sts_region: 'eu-west-1' });
    expect(await client.getByLabel('secret_key', { exact: true }).inputValue()).to.equal('');
    expect(await page.content()).not.to.contain('very-secret-key');

    const identity = page.getByRole('region', { name: 'Identity configuration' });
    await identity.getByLabel('iam_alias', { exact: true }).fill('no-such-alias');
    await identity.getByRole('button', { name: 'Save' }).click();
    await identity.getByRole('alert').filter({ hasText: 'iam_alias' }).waitFor();
    await identity.getByLabel('iam_alias', { exact: true }).fill('full_arn');
    await identity.getByLabel('ec2_metadata', { exact: true }).fill('account_id, ami_id');
    await identity.getByRole('button', { name: 'Save' }).click();
    await identity.getByText('Saved').waitFor();
    const ident = (await admin.get('auth/cloud/config/identity')).body.data;
    expect(ident.iam_alias).to.equal('full_arn');
    expect(ident.ec2_metadata).to.deep.equal(['account_id', 'ami_id']);
    await shot('24-cloud-auth-config');
  });

  it('cloud auth: removes a deny-listed role tag after confirming, and tidies the access list after confirming', async () => {
    const admin = server.client;
    expect((await admin.post('auth/cloud/role/tagged', { auth_type: 'ec2', bound_ami_id: 'ami-0abc1234', role_tag: 'KeywardenRole' })).status).to.equal(204);
    const tag = (await admin.post('auth/cloud/role/tagged/tag', {})).body.data.tag_value as string;
    expect((await admin.post(`auth/cloud/roletag-denylist/${encodeURIComponent(tag)}`, {})).status).to.equal(204);
    await section('Dashboard').click();
    await section('Cloud auth').click();
    const deny = page.getByRole('region', { name: 'Role-tag deny list' });
    await deny.getByRole('code').filter({ hasText: tag }).waitFor();
    await deny.getByRole('button', { name: `Remove ${tag}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await admin.list('auth/cloud/roletag-denylist')).body.data.keys).to.deep.equal([tag]);
    await deny.getByRole('button', { name: `Remove ${tag}` }).click();
    await confirm();
    await deny.getByText(`Removed ${tag}`).waitFor();
    expect((await admin.list('auth/cloud/roletag-denylist')).status).to.equal(404);

    const access = page.getByRole('region', { name: 'Identity access list' });
    await access.getByLabel('Tidy: safety buffer').fill('not-a-duration');
    await access.getByRole('button', { name: 'Tidy' }).click();
    await confirm();
    await access.getByRole('alert').filter({ hasText: 'safety_buffer' }).waitFor();
    await access.getByLabel('Tidy: safety buffer').fill('1h');
    await access.getByRole('button', { name: 'Tidy' }).click();
    expect(await page.getByRole('dialog').textContent()).to.contain('safety buffer 1h');
    await confirm();
    await access.getByText('Tidied').waitFor();
    await shot('25-cloud-auth-lists');
  });

  it('secrets engines: reloads a mount, and disables one only after confirming', async () => {
    const admin = server.client;
    expect((await admin.post('sys/mounts/scratch', { type: 'transit' })).status).to.equal(204);
    await section('Secrets engines').click();
    await page.getByRole('row').filter({ hasText: 'transit/' }).filter({ hasNotText: 'scratch' }).getByRole('button', { name: 'Reload' }).click();
    await page.getByText('Reloaded transit/').waitFor();
    // The reloaded backend still serves its keys.
    expect((await admin.get('transit/keys/orders')).status).to.equal(200);
    const scratch = page.getByRole('row').filter({ hasText: 'scratch/' });
    await scratch.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await admin.get('sys/mounts')).body.data).to.have.property('scratch/');
    await scratch.getByRole('button', { name: 'Disable' }).click();
    expect(await page.getByRole('dialog').textContent()).to.contain('Disable scratch/');
    await confirm();
    await page.getByText('Disabled scratch/').waitFor();
    await scratch.waitFor({ state: 'detached' });
    expect((await admin.get('sys/mounts')).body.data).not.to.have.property('scratch/');
    await shot('26-secrets-engines-reload-disable');
  });

  it('policies: deletes a policy only after confirming', async () => {
    const admin = server.client;
    expect((await admin.put('sys/policies/acl/short-lived', { policy: 'path "transit/*" { capabilities = ["read"] }' })).status).to.equal(204);
    await section('Policies').click();
    await page.getByRole('button', { name: 'Delete short-lived' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await admin.get('sys/policies/acl/short-lived')).status).to.equal(200);
    await page.getByRole('button', { name: 'Delete short-lived' }).click();
    await confirm();
    await page.getByRole('button', { name: 'Delete short-lived' }).waitFor({ state: 'detached' });
    expect((await admin.get('sys/policies/acl/short-lived')).status).to.equal(404);
  });

  it('tokens: looks one up by the token itself (never put in the page as text)', async () => {
    const admin = server.client;
    const token = (await admin.post('auth/token/create', { policies: ['default'], display_name: 'by-token', ttl: '30m' })).body.auth.client_token as string;
    await section('Tokens').click();
    await page.getByLabel('Find by').selectOption('token');
    await page.getByRole('region', { name: 'Look up or revoke a token' }).getByLabel('Token', { exact: true }).fill(token);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('token-by-token').waitFor();
    expect(await page.locator('main').textContent()).not.to.contain(token);
    await shot('27-token-lookup-by-token');
  });

  it('transit tools: HMAC, sign and verify, rewrap, data key, hash and random give what the server gives', async () => {
    const admin = server.client;
    await section('Transit tools').click();
    await page.getByRole('heading', { name: 'Transit tools' }).waitFor();
    await page.getByLabel('Key name').selectOption('orders');

    await page.getByRole('tab', { name: 'HMAC' }).click();
    await page.getByLabel('Input', { exact: true }).fill('ledger line');
    await page.getByRole('button', { name: 'HMAC', exact: true }).last().click();
    const hmac = await output('hmac');
    expect(hmac).to.match(/^vault:v1:/);
    const check = await admin.post('transit/verify/orders', { input: Buffer.from('ledger line').toString('base64'), hmac });
    expect(check.body.data.valid).to.equal(true);

    await page.getByRole('tab', { name: 'Verify' }).click();
    await page.getByLabel('Input and signature (or HMAC)', { exact: true }).fill('ledger line');
    await page.getByLabel('Checking').selectOption('hmac');
    await page.getByLabel('HMAC', { exact: true }).fill(hmac);
    await page.getByRole('button', { name: 'Verify', exact: true }).last().click();
    expect(await output('valid')).to.equal('true');

    await page.getByLabel('Key name').selectOption('signer');
    await page.getByRole('tab', { name: 'Sign' }).click();
    await page.getByLabel('Input', { exact: true }).fill('release 1.2.3');
    await page.getByRole('button', { name: 'Sign', exact: true }).last().click();
    const signature = await output('signature');
    expect(signature).to.match(/^vault:v1:/);
    await page.getByRole('tab', { name: 'Verify' }).click();
    await page.getByLabel('Input and signature (or HMAC)', { exact: true }).fill('release 1.2.3');
    await page.getByLabel('Checking').selectOption('signature');
    await page.getByLabel('Signature', { exact: true }).fill(signature);
    await page.getByRole('button', { name: 'Verify', exact: true }).last().click();
    expect(await output('valid')).to.equal('true');
    await page.getByLabel('Input and signature (or HMAC)', { exact: true }).fill('release 1.2.4');
    await page.getByRole('button', { name: 'Verify', exact: true }).last().click();
    await page.getByLabel('valid', { exact: true }).filter({ hasText: 'false' }).waitFor();
    await shot('28-transit-tools-verify');

    // Rewrap: a version 1 ciphertext comes back under the key's new version 2.
    const old = (await admin.post('transit/encrypt/orders', { plaintext: Buffer.from('rewrap me').toString('base64') })).body.data.ciphertext as string;
    expect((await admin.post('transit/keys/orders/rotate', {})).status).to.be.oneOf([200, 204]);
    await page.getByLabel('Key name').selectOption('orders');
    await page.getByRole('tab', { name: 'Rewrap' }).click();
    await page.getByLabel('Ciphertext', { exact: true }).fill(old);
    await page.getByRole('button', { name: 'Rewrap', exact: true }).last().click();
    const rewrapped = await output('ciphertext');
    expect(rewrapped).to.match(/^vault:v2:/);
    const back = await admin.post('transit/decrypt/orders', { ciphertext: rewrapped });
    expect(Buffer.from(back.body.data.plaintext, 'base64').toString()).to.equal('rewrap me');

    await page.getByRole('tab', { name: 'Data key' }).click();
    await page.getByLabel('Return').selectOption('plaintext');
    await page.getByLabel('Bits').selectOption('256');
    await page.getByRole('button', { name: 'Generate data key' }).click();
    const dataKey = await output('plaintext');
    const wrapped = await output('ciphertext');
    expect(Buffer.from(dataKey, 'base64')).to.have.length(32);
    expect((await admin.post('transit/decrypt/orders', { ciphertext: wrapped })).body.data.plaintext).to.equal(dataKey);

    await page.getByRole('tab', { name: 'Hash' }).click();
    await page.getByLabel('Input', { exact: true }).fill('hash me');
    await page.getByLabel('Hash algorithm').selectOption('sha2-512');
    await page.getByRole('button', { name: 'Hash', exact: true }).last().click();
    expect(await output('sum')).to.equal(createHash('sha512').update('hash me').digest('hex'));

    await page.getByRole('tab', { name: 'Random' }).click();
    await page.getByLabel('Bytes', { exact: true }).fill('16');
    await page.getByLabel('Format').selectOption('hex');
    await page.getByRole('button', { name: 'Generate random bytes' }).click();
    expect(await output('random_bytes')).to.match(/^[0-9a-f]{32}$/);
    await shot('29-transit-tools-random');
  });

  it('broke none of the Content-Security-Policy and threw no page error', () => {
    expect(cspViolations).to.deep.equal([]);
    expect(pageErrors).to.deep.equal([]);
  });
});
