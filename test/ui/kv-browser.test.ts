/**
 * The web UI's KV browser and the dashboard's request-rate chart, in headless Chromium against a
 * real server: mount kv v2 from the UI, write two versions, read the first, delete, undelete and
 * destroy versions, edit metadata with check-and-set then required, delete the key; kv v1 write and
 * delete; the chart draws once requests are counted, and a token without sys/metrics sees a note.
 * A screenshot of each screen goes to test-output/ui/.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, UI_SCREENSHOTS, watchedPage } from '../helpers/browser.js';
import { startUnsealedServer } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';


describe('the web UI in a real browser: KV browser and request rate (ui/pages/kv.tsx, ui/request-rate.tsx)', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let browser: Browser;
  let page: Page;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(UI_SCREENSHOTS, `${name}.png`), fullPage: true });
  const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const signIn = async (token: string) => {
    if (await page.getByRole('button', { name: 'Sign out' }).isVisible()) await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token', { exact: true }).fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  };
  const confirm = () => page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
  const newSecret = () => page.getByRole('region', { name: 'Write a new secret' });
  /** A secret's data as JSON: values are masked until shown, so the JSON view is opened first. */
  const shownData = async (scope: Locator, label: string) => {
    await scope.getByRole('button', { name: 'Show as JSON' }).click();
    return JSON.parse(String(await scope.getByLabel(label, { exact: true }).textContent())) as unknown;
  };

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    server = await startUnsealedServer({ ui: true });
    browser = await launchBrowser();
    page = await watchedPage(browser, { viewport: { width: 1280, height: 800 } }, { cspViolations, pageErrors });
    await page.goto(`${server.address}/ui/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signIn(server.rootToken);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await shot(`failed-kv-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('draws the request rate from sys/metrics once requests are counted', async () => {
    const chart = page.getByRole('region', { name: 'Request rate' });
    // Traffic from another client between the chart's reads: the rate it shows is above zero.
    const traffic = setInterval(() => void server.client.get('sys/seal-status'), 50);
    try {
      await chart.locator('svg.sparkline polyline').waitFor({ timeout: 20_000 });
      await chart.getByText(/[1-9][0-9.]* requests\/s|0\.[1-9][0-9]* requests\/s/).waitFor({ timeout: 20_000 });
    } finally {
      clearInterval(traffic);
    }
    // The line grows by a point at each read (every two seconds).
    const pointCount = async () => String(await chart.locator('svg.sparkline polyline').getAttribute('points')).split(' ').length;
    const first = await pointCount();
    expect(first).to.be.at.least(2);
    // Polled from here: a function evaluated in the page would itself break its CSP (no eval).
    const deadline = Date.now() + 10_000;
    while ((await pointCount()) <= first) {
      expect(Date.now()).to.be.below(deadline, 'the line gained no point in 10 s');
      await page.waitForTimeout(250);
    }
    await shot('19-dashboard-request-rate');
  });

  it('mounts kv v2, writes two versions, reads version 1, deletes, undeletes and destroys versions', async () => {
    await section('Secrets engines').click();
    await page.getByLabel('Type', { exact: true }).fill('kv-v2');
    await page.getByLabel('Path', { exact: true }).fill('secret');
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('cell', { name: 'secret/', exact: true }).waitFor();

    await section('KV secrets').click();
    await page.getByRole('heading', { name: 'KV secrets', level: 1 }).waitFor();
    expect(await page.getByLabel('Mount', { exact: true }).inputValue()).to.equal('secret');
    await page.getByText('Nothing here yet.').waitFor();
    // The server's own refusal of bad input reaches the form; bad JSON never leaves the browser.
    await newSecret().getByRole('radio', { name: 'JSON' }).check();
    await page.getByLabel('Secret path').fill('app/db');
    await page.getByLabel('Data (JSON)', { exact: true }).fill('{"password": ');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('alert').filter({ hasText: 'data: not valid JSON' }).waitFor();
    await page.getByLabel('Data (JSON)', { exact: true }).fill('{"password": "one"}');
    await page.getByRole('button', { name: 'Create secret' }).click();
    const detail = page.getByRole('region', { name: 'Secret app/db' });
    await detail.waitFor();
    // The browser opens the secret's folder, where it is listed; writing the same path again as "new" is refused by CAS 0.
    await page.getByRole('region', { name: 'Browse secret/app/' }).getByRole('button', { name: 'db', exact: true }).waitFor();
    await page.getByLabel('Secret path').fill('db');
    await page.getByLabel('Data (JSON)', { exact: true }).fill('{"password": "clobber"}');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('alert').filter({ hasText: 'check-and-set parameter did not match the current version' }).waitFor();

    await detail.getByLabel('Value 1', { exact: true }).fill('two');
    await detail.getByRole('button', { name: 'Save new version' }).click();
    await detail.getByRole('heading', { name: 'Version 2 (current)' }).waitFor();
    expect(await shownData(detail, 'Data of version 2')).to.deep.equal({ password: 'two' });
    await detail.getByRole('button', { name: 'Read version 1' }).click();
    await detail.getByRole('heading', { name: 'Version 1', exact: true }).waitFor();
    expect(await shownData(detail, 'Data of version 1')).to.deep.equal({ password: 'one' });
    await shot('20-kv-secret-versions');

    const admin = server.client;
    const versions = async () => (await admin.get('secret/metadata/app/db')).body.data.versions as Record<string, { deletion_time: string; destroyed: boolean }>;

    // Deleting asks first; Cancel leaves the version as it was.
    await detail.getByRole('button', { name: 'Delete version 2' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await versions())['2']!.deletion_time).to.equal('');
    await detail.getByRole('button', { name: 'Delete version 2' }).click();
    await confirm();
    await detail.getByText('Deleted version 2').waitFor();
    expect((await versions())['2']!.deletion_time).not.to.equal('');
    expect((await admin.get('secret/data/app/db')).status).to.equal(404);
    await detail.getByRole('button', { name: 'Read version 2' }).click();
    await detail.getByText('Version 2 is deleted or destroyed').waitFor();

    await detail.getByRole('button', { name: 'Undelete version 2' }).click();
    await detail.getByText('Undeleted version 2').waitFor();
    expect((await admin.get('secret/data/app/db')).body.data.data).to.deep.equal({ password: 'two' });

    await detail.getByRole('button', { name: 'Destroy version 1' }).click();
    expect(await page.getByRole('dialog').textContent()).to.contain('cannot be brought back');
    await confirm();
    await detail.getByText('Destroyed version 1').waitFor();
    expect((await versions())['1']!.destroyed).to.equal(true);
    await detail.getByRole('row').filter({ hasText: 'destroyed' }).waitFor();
  });

  it('edits metadata (custom metadata, check-and-set required), then refuses a write without CAS with the server\'s message, and deletes the key after confirming', async () => {
    const admin = server.client;
    const detail = page.getByRole('region', { name: 'Secret app/db' });
    await detail.getByText('Metadata and settings').click();
    await detail.getByLabel('Custom metadata').fill('owner=ops\nticket=SEC-12');
    await detail.getByLabel('Max versions').fill('5');
    await detail.getByRole('checkbox', { name: 'Require check-and-set on writes' }).check();
    await detail.getByRole('button', { name: 'Save metadata' }).click();
    await detail.getByText('Saved metadata').waitFor();
    const meta = (await admin.get('secret/metadata/app/db')).body.data;
    expect(meta).to.include({ cas_required: true, max_versions: 5 });
    expect(meta.custom_metadata).to.deep.equal({ owner: 'ops', ticket: 'SEC-12' });
    await shot('21-kv-metadata');

    // The key now requires CAS: the box is ticked for it; unticked, the server refuses the write.
    const casBox = detail.getByRole('checkbox', { name: /Check-and-set: only if version 2/ });
    await detail.getByText('(required here)').waitFor();
    expect(await casBox.isChecked()).to.equal(true);
    await casBox.uncheck();
    await detail.getByLabel('Value 1', { exact: true }).fill('three');
    await detail.getByRole('button', { name: 'Save new version' }).click();
    await detail.getByRole('alert').filter({ hasText: 'check-and-set parameter required for this call' }).waitFor();
    await casBox.check();
    await detail.getByRole('button', { name: 'Save new version' }).click();
    await detail.getByRole('heading', { name: 'Version 3 (current)' }).waitFor();
    expect((await admin.get('secret/data/app/db')).body.data.data).to.deep.equal({ password: 'three' });

    await detail.getByRole('button', { name: 'Delete secret and all versions' }).click();
    await confirm();
    await detail.waitFor({ state: 'detached' });
    expect((await admin.get('secret/metadata/app/db')).status).to.equal(404);
  });

  it('ticks check-and-set for every key when the mount requires it (kv config cas_required)', async () => {
    const admin = server.client;
    expect((await admin.post('secret/config', { cas_required: true })).status).to.be.oneOf([200, 204]);
    try {
      await page.goto(`${server.address}/ui/#/kv/secret/`);
      await newSecret().getByRole('radio', { name: 'JSON' }).check();
      await page.getByLabel('Secret path').fill('mount-cas');
      await page.getByLabel('Data (JSON)', { exact: true }).fill('{"v": 1}');
      await page.getByRole('button', { name: 'Create secret' }).click();
      const detail = page.getByRole('region', { name: 'Secret mount-cas' });
      await detail.getByText('(required here)').waitFor();
      expect(await detail.getByRole('checkbox', { name: /Check-and-set: only if version 1/ }).isChecked()).to.equal(true);
      // A value that is not text (a number) stays one when edited in its row.
      await detail.getByLabel('Value 1', { exact: true }).fill('2');
      await detail.getByRole('button', { name: 'Save new version' }).click();
      await detail.getByRole('heading', { name: 'Version 2 (current)' }).waitFor();
      expect((await admin.get('secret/data/mount-cas')).body.data.data).to.deep.equal({ v: 2 });
    } finally {
      await admin.post('secret/config', { cas_required: false });
    }
  });

  it('kv v1: browses folders, reads, replaces and deletes a secret after confirming', async () => {
    const admin = server.client;
    expect((await admin.post('sys/mounts/legacy', { type: 'kv' })).status).to.equal(204);
    expect((await admin.post('legacy/team/api-key', { value: 'k1' })).status).to.equal(204);
    await section('Dashboard').click();
    await section('KV secrets').click();
    await page.getByLabel('Mount', { exact: true }).selectOption('legacy');
    await page.getByRole('button', { name: 'team/', exact: true }).click();
    await page.getByRole('region', { name: 'Browse legacy/team/' }).waitFor();
    await page.getByRole('button', { name: 'api-key', exact: true }).click();
    const detail = page.getByRole('region', { name: 'Secret team/api-key' });
    expect(await shownData(detail, 'Data')).to.deep.equal({ value: 'k1' });
    await detail.getByLabel('Value 1', { exact: true }).fill('k2');
    await detail.getByRole('button', { name: 'Save' }).click();
    await detail.getByLabel('Data', { exact: true }).filter({ hasText: 'k2' }).waitFor();
    expect((await admin.get('legacy/team/api-key')).body.data).to.deep.equal({ value: 'k2' });
    await shot('22-kv-v1');
    await detail.getByRole('button', { name: 'Delete secret' }).click();
    await confirm();
    await detail.waitFor({ state: 'detached' });
    expect((await admin.get('legacy/team/api-key')).status).to.equal(404);
  });

  it('works at 390 px wide', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Mount', { exact: true }).selectOption('secret');
    await page.getByLabel('Secret path').fill('narrow');
    await newSecret().getByRole('radio', { name: 'Key/value' }).check();
    await newSecret().getByLabel('Key 1', { exact: true }).fill('a');
    await newSecret().getByLabel('Value 1', { exact: true }).fill('b');
    await page.keyboard.press('Tab');
    await page.getByRole('button', { name: 'Create secret' }).press('Enter');
    await page.getByRole('region', { name: 'Secret narrow' }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
    await shot('23-kv-390px');
    await section('Dashboard').click();
    await page.getByRole('region', { name: 'Request rate' }).locator('svg.sparkline').waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('hides the KV browser and the chart from a token whose policy grants neither', async () => {
    const admin = server.client;
    await admin.put('sys/policies/acl/reader', { policy: 'path "secret/data/*" { capabilities = ["read"] }' });
    const token = (await admin.post('auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;
    await signIn(token);
    await page.getByText('Your token may not read sys/metrics, so the request rate is not shown.').waitFor();
    const nav = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();
    expect(nav).not.to.include('KV secrets');
    await signIn(server.rootToken);
  });

  it('broke none of the Content-Security-Policy and threw no page error', () => {
    expect(cspViolations).to.deep.equal([]);
    expect(pageErrors).to.deep.equal([]);
  });
});
