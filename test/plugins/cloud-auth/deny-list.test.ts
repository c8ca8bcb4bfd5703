/**
 * The role-tag deny list in storage: one entry per tag, keyed by the tag's canonical form whatever
 * spelling names it, with entries an earlier version stored under another spelling still found,
 * merged, listed and removed.
 */
import { expect } from 'chai';
import { MemoryStorage } from '../../../storage/memory.js';
import { serializeRoleTag, type RoleTag } from '../../../plugins/cloud-auth/role-tag.js';
import { STORAGE_KEYS } from '../../../plugins/cloud-auth/storage.js';
import { deleteDenyListEntry, listDenyList, readDenyListEntry, writeDenyListEntry, type DenyListEntry } from '../../../plugins/cloud-auth/deny-list.js';

const KEY = 'role-hmac-key';
const TAG: RoleTag = { nonce: 'Zm9vYmFyMTI=', role: 'web', disallowReauthentication: false, allowInstanceMigration: false, policies: ['api', 'web'], instanceId: '', maxTtl: 600 };
const CANONICAL = serializeRoleTag(TAG, KEY);
const hmacOf = (value: string) => value.slice(value.lastIndexOf(':'));
/** Spellings an earlier version accepted: same fields, same HMAC. */
const REORDERED = `v1:${TAG.nonce}:m=false:r=web:d=0:p=web,api:t=600${hmacOf(CANONICAL)}`;
const PADDED = `v1:${TAG.nonce}:r=web:d=false:m=false:p= api,web,web:t=600:t=600${hmacOf(CANONICAL)}`;

const keyOf = (tag: string) => STORAGE_KEYS.denyListPrefix + Buffer.from(tag, 'utf8').toString('base64url');
const entry = (created: string, expires: string): DenyListEntry => ({ creation_time: created, expiration_time: expires });

describe('cloud auth deny list storage', () => {
  let storage: MemoryStorage;
  /** What an earlier version wrote for `roletag-denylist/<spelling>`. */
  const storeAsEarlierVersion = (spelling: string, value: DenyListEntry) => storage.put(keyOf(spelling), Buffer.from(JSON.stringify(value), 'utf8'));

  beforeEach(() => {
    storage = new MemoryStorage();
  });

  it('keys an entry by the canonical tag, whichever spelling names it', async () => {
    const denied = entry('2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z');
    await writeDenyListEntry(storage, REORDERED, denied);
    expect(await storage.list(STORAGE_KEYS.denyListPrefix)).to.deep.equal([keyOf(CANONICAL).slice(STORAGE_KEYS.denyListPrefix.length)]);
    for (const spelling of [CANONICAL, REORDERED, PADDED]) expect(await readDenyListEntry(storage, spelling), spelling).to.deep.equal(denied);
    expect(await listDenyList(storage)).to.deep.equal([CANONICAL]);
  });

  it('finds entries an earlier version stored under other spellings, as one entry: denied since the earliest, until the latest expiry', async () => {
    await storeAsEarlierVersion(REORDERED, entry('2025-03-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z'));
    await storeAsEarlierVersion(PADDED, entry('2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z'));
    expect(await readDenyListEntry(storage, CANONICAL)).to.deep.equal(entry('2025-01-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z'));
    expect(await listDenyList(storage)).to.deep.equal([CANONICAL]);
  });

  it('removes a tag under every spelling it was stored by, and a new write replaces the old spellings', async () => {
    await storeAsEarlierVersion(REORDERED, entry('2025-03-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z'));
    await storeAsEarlierVersion(PADDED, entry('2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z'));
    await deleteDenyListEntry(storage, CANONICAL);
    expect(await readDenyListEntry(storage, REORDERED)).to.equal(undefined);
    expect(await storage.list(STORAGE_KEYS.denyListPrefix)).to.deep.equal([]);

    await storeAsEarlierVersion(PADDED, entry('2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z'));
    await writeDenyListEntry(storage, CANONICAL, entry('2025-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'));
    expect(await storage.list(STORAGE_KEYS.denyListPrefix)).to.deep.equal([keyOf(CANONICAL).slice(STORAGE_KEYS.denyListPrefix.length)]);
  });
});
