/**
 * The identity and lease screens (ui/pages/identity.tsx, ui/pages/leases.tsx) in headless
 * Chromium against a real server: entities and groups created, edited and deleted through the
 * page and checked against the server; a login's entity shown with its alias; leases browsed by
 * prefix, looked up, revoked and revoked by prefix after confirming. No token is ever in
 * the page. A screenshot of each screen goes to test-output/ui/.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, UI_SCREENSHOTS, watchedPage } from '../helpers/browser.js';
import { startUnsealedServer } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';
import { contractPlugin } from '../fixtures/plugins/contract.js';

describe('the web UI in a real browser: entities, groups and leases', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let browser: Browser;
  let page: Page;
  const record = { cspViolations: [] as string[], pageErrors: [] as string[] };
  /** Tokens minted by logins: none may ever appear in the page. */
  const tokens: string[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(UI_SCREENSHOTS, `${name}.png`), fullPage: true });
  const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const confirm = () => page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
  const cancel = () => page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  const login = async (user: string): Promise<{ token: string; entityId: string }> => {
    const res = await server.client.post(`auth/userpass/login/${user}`, { password: 'correct horse' });
    expect(res.status, res.text).to.equal(200);
    tokens.push(res.body.auth.client_token as string);
    return { token: res.body.auth.client_token as string, entityId: res.body.auth.entity_id as string };
  };
  const entityByName = async (name: string) => (await server.client.get(`identity/entity/name/${name}`)).body?.data;
  const groupByName = async (name: string) => (await server.client.get(`identity/group/name/${name}`)).body?.data;

  before(async function () {
    this.timeout(300_000);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    // The contract engine's secrets have renewable leases and record what was done to them.
    server = await startUnsealedServer({ ui: true, plugins: [contractPlugin] });
    const admin = server.client;
    expect((await admin.post('sys/auth/userpass', { type: 'userpass' })).status).to.equal(204);
    for (const user of ['alice', 'bob']) {
      expect((await admin.post(`auth/userpass/users/${user}`, { password: 'correct horse', token_ttl: '1h' })).status).to.equal(204);
    }
    browser = await launchBrowser();
    page = await watchedPage(browser, { viewport: { width: 1280, height: 900 } }, record);
    await page.goto(`${server.address}/ui/`);
    await page.getByLabel('Token', { exact: true }).fill(server.rootToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await shot(`failed-identity-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('entities: creates one with policies and metadata, disables it, shows a login\'s alias, and deletes only after confirming', async () => {
    await section('Entities').click();
    await page.getByRole('heading', { name: 'Entities', level: 1 }).waitFor();
    const editor = page.getByRole('region', { name: 'New entity' });
    await editor.getByLabel('Name', { exact: true }).fill('payments-service');
    await editor.getByLabel('Policies', { exact: true }).fill('payments-read, audit-read');
    await editor.getByLabel('Metadata', { exact: true }).fill('team=payments\nregion=eu-west-1');
    await editor.getByRole('button', { name: 'Create entity' }).click();
    await page.getByText('Saved payments-service').waitFor();
    const created = await entityByName('payments-service');
    expect(created.policies).to.deep.equal(['payments-read', 'audit-read']);
    expect(created.metadata).to.deep.equal({ team: 'payments', region: 'eu-west-1' });
    expect(created.disabled).to.equal(false);

    // A bad metadata line is refused in the page, naming the field; nothing is written.
    const edit = page.getByRole('region', { name: 'Entity payments-service' });
    await edit.getByLabel('Metadata', { exact: true }).fill('team=payments\nno equals sign');
    await edit.getByRole('button', { name: 'Save entity' }).click();
    await edit.getByRole('alert').filter({ hasText: 'metadata' }).waitFor();
    await edit.getByLabel('Metadata', { exact: true }).fill('team=payments');
    await edit.getByLabel('Disabled (its tokens are refused at their next use)').check();
    await edit.getByRole('button', { name: 'Save entity' }).click();
    await page.getByText('Saved payments-service').waitFor();
    const saved = await entityByName('payments-service');
    expect(saved.disabled).to.equal(true);
    expect(saved.metadata).to.deep.equal({ team: 'payments' });

    // A login made an entity with an alias on the userpass mount: the page shows it.
    const { entityId } = await login('alice');
    await section('Dashboard').click();
    await section('Entities').click();
    const aliceName = (await server.client.get(`identity/entity/id/${entityId}`)).body.data.name as string;
    await page.getByRole('button', { name: aliceName, exact: true }).click();
    const aliases = page.getByRole('table', { name: 'Aliases' });
    await aliases.getByRole('row').filter({ hasText: 'alice' }).filter({ hasText: 'auth/userpass/' }).waitFor();
    await shot('40-identity-entity');

    await page.getByRole('button', { name: 'Delete payments-service' }).click();
    await cancel();
    expect(await entityByName('payments-service')).to.not.equal(undefined);
    await page.getByRole('button', { name: 'Delete payments-service' }).click();
    await confirm();
    await page.getByRole('button', { name: 'Delete payments-service' }).waitFor({ state: 'detached' });
    expect((await server.client.get('identity/entity/name/payments-service')).status).to.equal(404);
  });

  it('groups: creates one with a member entity and policies, nests it in another, and deletes after confirming', async () => {
    const admin = server.client;
    expect((await admin.post('identity/entity', { name: 'builder' })).status).to.be.oneOf([200, 204]);
    const builder = await entityByName('builder');
    await section('Groups').click();
    await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();
    const editor = page.getByRole('region', { name: 'New group' });
    await editor.getByLabel('Name', { exact: true }).fill('ci');
    await editor.getByLabel('Policies', { exact: true }).fill('deploy');
    await editor.getByRole('group', { name: 'Member entities' }).getByLabel('builder', { exact: true }).check();
    await editor.getByRole('button', { name: 'Create group' }).click();
    await page.getByText('Saved ci').waitFor();
    const ci = await groupByName('ci');
    expect(ci.type).to.equal('internal');
    expect(ci.policies).to.deep.equal(['deploy']);
    expect(ci.member_entity_ids).to.deep.equal([builder.id]);

    await page.getByRole('button', { name: 'New group' }).click();
    await editor.getByLabel('Name', { exact: true }).fill('engineering');
    await editor.getByLabel('Metadata', { exact: true }).fill('owner=platform');
    await editor.getByRole('group', { name: 'Member groups' }).getByLabel('ci', { exact: true }).check();
    await editor.getByRole('button', { name: 'Create group' }).click();
    await page.getByText('Saved engineering').waitFor();
    const engineering = await groupByName('engineering');
    expect(engineering.member_group_ids).to.deep.equal([ci.id]);
    expect(engineering.metadata).to.deep.equal({ owner: 'platform' });
    // The entity now belongs to both, one of them through the nesting.
    expect((await entityByName('builder')).group_ids).to.have.members([ci.id, engineering.id]);
    await shot('41-identity-groups');

    // Editing: the member is taken out of ci.
    await page.getByRole('button', { name: 'ci', exact: true }).click();
    const edit = page.getByRole('region', { name: 'Group ci' });
    await edit.getByRole('group', { name: 'Member entities' }).getByLabel('builder', { exact: true }).uncheck();
    await edit.getByRole('button', { name: 'Save group' }).click();
    await page.getByText('Saved ci').waitFor();
    expect((await groupByName('ci')).member_entity_ids).to.equal(null);

    await page.getByRole('button', { name: 'Delete engineering' }).click();
    await cancel();
    expect(await groupByName('engineering')).to.not.equal(undefined);
    await page.getByRole('button', { name: 'Delete engineering' }).click();
    await confirm();
    await page.getByRole('button', { name: 'Delete engineering' }).waitFor({ state: 'detached' });
    expect((await admin.get('identity/group/name/engineering')).status).to.equal(404);
  });

  it('leases: browses by prefix, looks one up (a token\'s lease says how it is renewed), revokes it, and revokes a prefix after confirming', async () => {
    const admin = server.client;
    const bob = await login('bob');
    const second = await login('bob');
    await section('Leases').click();
    await page.getByRole('heading', { name: 'Leases', level: 1 }).waitFor();
    await page.getByLabel('Prefix', { exact: true }).fill('auth/userpass/login/bob/');
    await page.getByRole('button', { name: 'List', exact: true }).click();
    const tree = page.getByRole('list', { name: 'Leases and folders' });
    const leaseButtons = tree.getByRole('button', { name: /^Look up auth\/userpass\/login\/bob\// });
    await leaseButtons.nth(1).waitFor();
    expect(await leaseButtons.count()).to.equal(2);

    await leaseButtons.first().click();
    const detail = page.getByRole('region', { name: 'Lease' });
    await detail.getByText('Renewable', { exact: true }).waitFor();
    const leaseId = String(await detail.locator('dd code').first().textContent());
    expect(leaseId).to.match(/^auth\/userpass\/login\/bob\//);
    expect(await detail.locator('dl').textContent()).to.contain('Renewable').and.contain('yes');
    // sys/leases/renew refuses a token's lease (as Vault's): the page says how it is renewed instead.
    expect((await admin.put('sys/leases/renew', { lease_id: leaseId })).status).to.equal(400);
    await detail.getByRole('note').filter({ hasText: 'auth/token/renew-accessor' }).waitFor();
    expect(await detail.getByRole('button', { name: 'Renew' }).count()).to.equal(0);
    await shot('42-leases-lookup');

    await detail.getByRole('button', { name: 'Revoke lease' }).click();
    await cancel();
    expect((await admin.put('sys/leases/lookup', { lease_id: leaseId })).status).to.equal(200);
    await detail.getByRole('button', { name: 'Revoke lease' }).click();
    await confirm();
    await page.getByText(`Revoked ${leaseId}`).waitFor();
    expect((await admin.put('sys/leases/lookup', { lease_id: leaseId })).status).to.equal(400);
    await leaseButtons.nth(1).waitFor({ state: 'detached' });
    // Leases list in the order of their ids (a token's salted hash), so either login may have been
    // the one revoked: exactly one of the two tokens stops working.
    const alive = [];
    for (const login of [bob, second]) if ((await admin.post('auth/token/lookup', { token: login.token })).status === 200) alive.push(login);
    expect(alive).to.have.length(1);
    const survivor = alive[0]!;

    // Revoke-prefix: the whole mount, after confirming; every token of its logins stops working.
    await page.getByRole('button', { name: '..' }).click();
    await page.getByRole('button', { name: '..' }).click();
    await tree.getByRole('button', { name: 'login/' }).waitFor();
    await page.getByRole('button', { name: 'Revoke every lease under auth/userpass/' }).click();
    expect(await page.getByRole('dialog').textContent()).to.contain('Revoke every lease under auth/userpass/?');
    await cancel();
    expect((await admin.post('auth/token/lookup', { token: survivor.token })).status).to.equal(200);
    await page.getByRole('button', { name: 'Revoke every lease under auth/userpass/' }).click();
    await confirm();
    await page.getByText('Revoked every lease under auth/userpass/').waitFor();
    for (const token of [bob.token, second.token]) expect((await admin.post('auth/token/lookup', { token })).status).to.equal(403);
    await shot('43-leases-revoke-prefix');
  });

  it('leases: renews a secret\'s lease by the increment asked, through its engine, and revokes it through the engine after confirming', async () => {
    const admin = server.client;
    expect((await admin.post('sys/mounts/engine', { type: 'contract' })).status).to.equal(204);
    const issued = await admin.post('engine/leased/ui', { ttl: '1h', max_ttl: '3h' });
    expect(issued.status, issued.text).to.equal(200);
    const leaseId = issued.body.lease_id as string;
    const engineState = async () => (await admin.get('engine/leased/ui')).body.data as { state: string; renewals: number };
    await section('Leases').click();
    await page.getByLabel('Prefix', { exact: true }).fill('engine/leased/ui/');
    await page.getByRole('button', { name: 'List', exact: true }).click();
    await page.getByRole('list', { name: 'Leases and folders' }).getByRole('button', { name: `Look up ${leaseId}` }).click();
    const detail = page.getByRole('region', { name: 'Lease' });
    await detail.getByText('Renewable', { exact: true }).waitFor();
    await detail.getByLabel('Increment').fill('2h');
    await detail.getByRole('button', { name: 'Renew' }).click();
    await page.getByText(`Renewed ${leaseId}`).waitFor();
    expect(await engineState()).to.deep.equal({ state: 'live', renewals: 1 });
    expect((await admin.put('sys/leases/lookup', { lease_id: leaseId })).body.data.ttl).to.be.within(7190, 7200);
    await detail.getByText('never').waitFor({ state: 'detached' });

    await detail.getByRole('button', { name: 'Revoke lease' }).click();
    expect(await page.getByRole('dialog').textContent()).to.contain('Its engine revokes the secret at once');
    await confirm();
    await page.getByText(`Revoked ${leaseId}`).waitFor();
    expect(await engineState()).to.include({ state: 'revoked' });
    expect((await admin.put('sys/leases/lookup', { lease_id: leaseId })).status).to.equal(400);
  });

  it('never put a login\'s token in the page, broke none of the Content-Security-Policy and threw no page error', async () => {
    const content = await page.content();
    for (const token of tokens) expect(content).not.to.contain(token);
    expect(record.cspViolations).to.deep.equal([]);
    expect(record.pageErrors).to.deep.equal([]);
  });
});
