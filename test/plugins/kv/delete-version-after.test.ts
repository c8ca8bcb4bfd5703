/**
 * delete_version_after cannot break a kv version 2 mount: a duration too long for a date is a 400
 * naming the field (on the mount config and on a key's metadata), and an over-large value stored
 * before durations were bounded still lets every write through, with a deletion time at the
 * longest duration accepted.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';

/** A million years: what a config write once stored, after which every write answered 500. */
const MILLION_YEARS = '8760000000h';
const MILLION_YEARS_SECONDS = 8_760_000_000 * 3600;
/** The latest deletion time any write can set: the year now + 2562047h47m16s falls in. */
const LATEST_YEAR = new Date().getUTCFullYear() + 293;

describe('kv version 2 delete_version_after bounds', function () {
  this.timeout(30_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  let client: TestClient;
  let uuid: string;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    client = server.client;
    expect((await client.post('sys/mounts/kv', { type: 'kv', options: { version: '2' } })).status).to.equal(204);
    uuid = (await client.get('sys/mounts/kv')).body.data.uuid as string;
  });
  after(() => server.close());

  const write = (path: string) => client.post(`kv/data/${path}`, { data: { a: 1 } });
  const deletionYear = (answer: { body: { data: { deletion_time: string } } }) => new Date(answer.body.data.deletion_time).getUTCFullYear();

  it('refuses a delete_version_after too long for a date on the mount config, naming the field, and keeps writing', async () => {
    const refused = await client.post('kv/config', { delete_version_after: MILLION_YEARS });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.errors[0]).to.contain('delete_version_after').and.contain('out of range');
    expect((await client.get('kv/config')).body.data.delete_version_after).to.equal('0s');
    const written = await write('after-config');
    expect(written.status, written.text).to.equal(200);
  });

  it('refuses a delete_version_after too long for a date on a key\'s metadata, naming the field, and keeps writing', async () => {
    const refused = await client.post('kv/metadata/after-meta', { delete_version_after: MILLION_YEARS });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.errors[0]).to.contain('delete_version_after').and.contain('out of range');
    const written = await write('after-meta');
    expect(written.status, written.text).to.equal(200);
    expect(written.body.data.deletion_time).to.equal('');
  });

  it('takes the longest duration accepted and dates the deletion within it', async () => {
    expect((await client.post('kv/metadata/longest', { delete_version_after: '2562047h47m16s' })).status).to.equal(204);
    const written = await write('longest');
    expect(written.status, written.text).to.equal(200);
    expect(deletionYear(written)).to.be.within(LATEST_YEAR - 1, LATEST_YEAR);
  });

  it('still writes under an over-large delete_version_after stored before the bound, on the mount or on a key', async () => {
    const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    await server.host.barrier.put(`logical/${uuid}/config`, encode({ maxVersions: 0, casRequired: false, deleteVersionAfter: MILLION_YEARS_SECONDS }));
    // Written behind the mount's back, the settings are read again once told, as when another node wrote them.
    const settingsChanged = () => server.host.mounts.byUuid(uuid)!.backend!.invalidate!('config');
    settingsChanged();
    const underConfig = await write('stored-config');
    expect(underConfig.status, underConfig.text).to.equal(200);
    expect(deletionYear(underConfig)).to.be.within(LATEST_YEAR - 1, LATEST_YEAR);
    expect((await client.get('kv/data/stored-config')).body.data.data).to.deep.equal({ a: 1 });
    await server.host.barrier.put(`logical/${uuid}/config`, encode({ maxVersions: 0, casRequired: false, deleteVersionAfter: 0 }));
    settingsChanged();

    expect((await write('stored-meta')).status).to.equal(200);
    const meta = JSON.parse(new TextDecoder().decode(await server.host.barrier.get(`logical/${uuid}/metadata/stored-meta`)));
    await server.host.barrier.put(`logical/${uuid}/metadata/stored-meta`, encode({ ...meta, deleteVersionAfter: MILLION_YEARS_SECONDS }));
    const underMeta = await write('stored-meta');
    expect(underMeta.status, underMeta.text).to.equal(200);
    expect(deletionYear(underMeta)).to.be.within(LATEST_YEAR - 1, LATEST_YEAR);
    const patched = await client.send('PATCH', 'kv/data/stored-meta', { headers: { 'Content-Type': 'application/merge-patch+json' }, body: { data: { b: 2 } } });
    expect(patched.status, patched.text).to.equal(200);
  });
});
