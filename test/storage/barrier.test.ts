import { expect } from 'chai';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { BadRequestError, IntegrityError, SealedError } from '../../core/errors.js';
import { Barrier, DEFAULT_ROTATION_CONFIG, KEYRING_PATH, MAX_OPERATIONS_LIMIT } from '../../storage/barrier.js';
import { ManualClock } from '../helpers/server.js';
import { MemoryStorage } from '../../storage/memory.js';
import { bytes, caught, text } from './helpers.js';
import { describeStorageContract } from './storage-contract.js';

const ROOT_KEY = Buffer.alloc(32, 0x11);

/** The decrypted keyring document, loosely typed so tests can break it. */
type KeyringDoc = { Keys: Record<string, unknown>[]; RotationConfig?: unknown };

async function unsealedBarrier(): Promise<{ physical: MemoryStorage; barrier: Barrier }> {
  const physical = new MemoryStorage();
  const barrier = new Barrier(physical);
  await barrier.initialize(ROOT_KEY);
  await barrier.unseal(ROOT_KEY);
  return { physical, barrier };
}

/** Hands out the given byte strings in order, so a barrier's keys and nonces are known. */
function scriptedRandom(...chunks: Buffer[]): (size: number) => Uint8Array {
  return (size) => {
    const next = chunks.shift();
    if (next === undefined || next.length !== size) throw new Error(`unexpected random request of ${size} bytes`);
    return Buffer.from(next);
  };
}

/** AES-256-GCM straight from node:crypto, independent of the code under test. */
function referenceSeal(key: Buffer, nonce: Buffer, plaintext: Buffer, aad: string): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([ct, cipher.getAuthTag()]);
}

function referenceOpen(key: Buffer, stored: Uint8Array, aad: string): Buffer {
  const value = Buffer.from(stored);
  const decipher = createDecipheriv('aes-256-gcm', key, value.subarray(5, 17));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(value.subarray(value.length - 16));
  return Buffer.concat([decipher.update(value.subarray(17, value.length - 16)), decipher.final()]);
}

describeStorageContract('Barrier', async () => {
  const { physical, barrier } = await unsealedBarrier();
  return { storage: barrier, teardown: () => physical.close() };
});

describe('Barrier', () => {
  describe('format', () => {
    const dataKey = Buffer.from(Array.from({ length: 32 }, (_, i) => 0x40 + i));
    const keyringNonce = Buffer.alloc(12, 0x77);
    const valueNonce = Buffer.from(Array.from({ length: 12 }, (_, i) => 0xa0 + i));

    async function scriptedBarrier(): Promise<{ physical: MemoryStorage; barrier: Barrier }> {
      const physical = new MemoryStorage();
      const barrier = new Barrier(physical, { randomBytes: scriptedRandom(dataKey, keyringNonce, valueNonce) });
      await barrier.initialize(ROOT_KEY);
      await barrier.unseal(ROOT_KEY);
      return { physical, barrier };
    }

    it('stores term ‖ 0x02 ‖ nonce ‖ AES-256-GCM(path as AAD) ‖ tag, byte for byte', async () => {
      const { physical, barrier } = await scriptedBarrier();
      await barrier.put('logical/kat/entry', bytes('known answer'));

      const expected = Buffer.concat([
        Buffer.from([0, 0, 0, 1, 0x02]),
        valueNonce,
        referenceSeal(dataKey, valueNonce, Buffer.from('known answer'), 'logical/kat/entry'),
      ]);
      const stored = Buffer.from((await physical.get('logical/kat/entry'))!);
      expect(stored.toString('hex')).to.equal(expected.toString('hex'));
      // Pinned from an independent implementation (Python `cryptography`), so the format cannot drift.
      expect(stored.toString('hex')).to.equal(
        '0000000102a0a1a2a3a4a5a6a7a8a9aaabbce169488ccbfd430a18248c446f2ad240e6d924b70d5bca69b1e011',
      );
      expect(text(await barrier.get('logical/kat/entry'))).to.equal('known answer');
    });

    it('stores the keyring under the root key as term 1 with AAD "core/keyring"', async () => {
      const { physical } = await scriptedBarrier();
      const stored = (await physical.get(KEYRING_PATH))!;
      expect(Buffer.from(stored.subarray(0, 17)).toString('hex')).to.equal('0000000102' + keyringNonce.toString('hex'));

      const keyring = JSON.parse(referenceOpen(ROOT_KEY, stored, 'core/keyring').toString('utf8'));
      expect(keyring.Keys).to.have.length(1);
      expect(keyring.Keys[0].Term).to.equal(1);
      expect(keyring.Keys[0].Version).to.equal(1);
      expect(keyring.Keys[0].Value).to.equal(dataKey.toString('base64'));
      expect(Number.isNaN(Date.parse(keyring.Keys[0].InstallTime))).to.equal(false);
    });

    it('writes no plaintext, data key or root key to physical storage', async () => {
      const { physical, barrier } = await scriptedBarrier();
      const marker = 'KEYWARDEN-PLAINTEXT-MARKER-7f3a';
      await barrier.put('logical/x/secret', bytes(marker));
      for (const key of ['logical/x/secret', KEYRING_PATH]) {
        const raw = Buffer.from((await physical.get(key))!);
        expect(raw.includes(Buffer.from(marker)), `${key} holds the marker`).to.equal(false);
        expect(raw.includes(dataKey), `${key} holds the data key`).to.equal(false);
        expect(raw.includes(ROOT_KEY), `${key} holds the root key`).to.equal(false);
      }
    });
  });

  describe('integrity', () => {
    it('rejects a value with any single byte flipped, naming the path', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('logical/a/b', bytes('tamper me'));
      const stored = (await physical.get('logical/a/b'))!;
      for (let i = 0; i < stored.length; i++) {
        const bad = Uint8Array.from(stored);
        bad[i]! ^= 0x80;
        await physical.put('logical/a/b', bad);
        const err = await caught(barrier.get('logical/a/b'));
        expect(err, `byte ${i}`).to.be.instanceOf(IntegrityError);
        expect(err.message).to.contain('logical/a/b');
      }
    });

    it('rejects a value copied to another path', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('logical/a/original', bytes('v'));
      await physical.put('logical/a/copy', (await physical.get('logical/a/original'))!);
      const err = await caught(barrier.get('logical/a/copy'));
      expect(err).to.be.instanceOf(IntegrityError);
      expect(err.message).to.contain('logical/a/copy');
    });

    it('rejects a value under a term the keyring does not have', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('k', bytes('v'));
      const stored = Uint8Array.from((await physical.get('k'))!);
      stored.set([0, 0, 0, 99], 0);
      await physical.put('k', stored);
      const err = await caught(barrier.get('k'));
      expect(err).to.be.instanceOf(IntegrityError);
      expect(err.message).to.contain('term 99');
    });

    it('rejects an unknown version byte, including the legacy no-AAD version 1', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('k', bytes('v'));
      for (const version of [0x01, 0x03]) {
        const stored = Uint8Array.from((await physical.get('k'))!);
        stored[4] = version;
        await physical.put('k', stored);
        expect((await caught(barrier.get('k'))).message).to.contain('version');
      }
    });

    it('rejects values too short to hold header, nonce and tag', async () => {
      const { physical, barrier } = await unsealedBarrier();
      for (const length of [0, 4, 5, 32]) {
        await physical.put('short', new Uint8Array(length));
        expect(await caught(barrier.get('short')), `length ${length}`).to.be.instanceOf(IntegrityError);
      }
    });
  });

  describe('seal lifecycle', () => {
    it('starts sealed, and initialize leaves it sealed and marks it initialized', async () => {
      const barrier = new Barrier(new MemoryStorage());
      expect(barrier.sealed).to.equal(true);
      expect(await barrier.isInitialized()).to.equal(false);
      await barrier.initialize(ROOT_KEY);
      expect(await barrier.isInitialized()).to.equal(true);
      expect(barrier.sealed).to.equal(true);
    });

    it('refuses to initialize twice, keeping the first keyring', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('k', bytes('v'));
      const keyring = await physical.get(KEYRING_PATH);
      expect(await caught(barrier.initialize(Buffer.alloc(32, 0x22)))).to.be.instanceOf(BadRequestError);
      expect(Buffer.from((await physical.get(KEYRING_PATH))!).equals(Buffer.from(keyring!))).to.equal(true);
    });

    it('refuses a root key that is not 32 bytes', async () => {
      const barrier = new Barrier(new MemoryStorage());
      expect(await caught(barrier.initialize(Buffer.alloc(16)))).to.be.instanceOf(BadRequestError);
    });

    it('refuses to unseal before initialization', async () => {
      expect(await caught(new Barrier(new MemoryStorage()).unseal(ROOT_KEY))).to.be.instanceOf(BadRequestError);
    });

    it('refuses a wrong root key and stays sealed', async () => {
      const physical = new MemoryStorage();
      const barrier = new Barrier(physical);
      await barrier.initialize(ROOT_KEY);
      for (const wrong of [Buffer.alloc(32, 0x12), Buffer.alloc(31, 0x11)]) {
        const err = await caught(barrier.unseal(wrong));
        expect(err).to.be.instanceOf(IntegrityError);
        expect(err.message).to.equal('unseal failed, invalid key');
        expect(barrier.sealed).to.equal(true);
      }
    });

    it('while sealed, every data operation and keyStatus throw SealedError', async () => {
      const { barrier } = await unsealedBarrier();
      await barrier.put('k', bytes('v'));
      barrier.seal();
      expect(barrier.sealed).to.equal(true);
      for (const attempt of [
        barrier.get('k'), barrier.put('k', bytes('v')), barrier.delete('k'), barrier.list(''),
        barrier.batch([{ type: 'delete', key: 'k' }]), barrier.rotate(),
      ]) {
        expect(await caught(attempt)).to.be.instanceOf(SealedError);
      }
      expect(() => barrier.keyStatus()).to.throw(SealedError);
    });

    it('seal is idempotent, and unsealing again restores access to the same data', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('k', bytes('v'));
      barrier.seal();
      barrier.seal();
      await barrier.unseal(ROOT_KEY);
      expect(text(await barrier.get('k'))).to.equal('v');
      const fresh = new Barrier(physical);
      await fresh.unseal(ROOT_KEY);
      expect(text(await fresh.get('k'))).to.equal('v');
    });

    it('unsealing an unsealed barrier with a wrong key fails and leaves it unsealed', async () => {
      const { barrier } = await unsealedBarrier();
      expect(await caught(barrier.unseal(Buffer.alloc(32, 0x99)))).to.be.instanceOf(IntegrityError);
      expect(barrier.sealed).to.equal(false);
    });

    it('an unseal that is still reading the keyring when seal() is called does not unseal', async () => {
      const physical = new MemoryStorage();
      const barrier = new Barrier(physical);
      await barrier.initialize(ROOT_KEY);
      const pending = barrier.unseal(ROOT_KEY);
      barrier.seal();
      expect(await caught(pending)).to.be.instanceOf(SealedError);
      expect(barrier.sealed).to.equal(true);
    });
  });

  describe('rotation', () => {
    it('adds a term used for new writes while older values still decrypt', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('old', bytes('written under term 1'));
      const status = await barrier.rotate();
      expect(status.term).to.equal(2);
      await barrier.put('new', bytes('written under term 2'));

      expect(Buffer.from((await physical.get('old'))!.subarray(0, 4)).readUInt32BE(0)).to.equal(1);
      expect(Buffer.from((await physical.get('new'))!.subarray(0, 4)).readUInt32BE(0)).to.equal(2);
      expect(text(await barrier.get('old'))).to.equal('written under term 1');
      expect(text(await barrier.get('new'))).to.equal('written under term 2');
    });

    it('persists the new term, so a later unseal reads both terms', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await barrier.put('old', bytes('1'));
      await barrier.rotate();
      await barrier.put('new', bytes('2'));
      barrier.seal();

      const restarted = new Barrier(physical);
      await restarted.unseal(ROOT_KEY);
      expect(restarted.keyStatus().term).to.equal(2);
      expect(text(await restarted.get('old'))).to.equal('1');
      expect(text(await restarted.get('new'))).to.equal('2');
      const stored = (await physical.get(KEYRING_PATH))!;
      expect(Buffer.from(stored.subarray(0, 4)).readUInt32BE(0), 'keyring framing term').to.equal(1);
    });

    it('concurrent rotations each get their own term', async () => {
      const { physical, barrier } = await unsealedBarrier();
      const [a, b, c] = await Promise.all([barrier.rotate(), barrier.rotate(), barrier.rotate()]);
      expect([a.term, b.term, c.term]).to.deep.equal([2, 3, 4]);
      await barrier.put('k', bytes('v'));
      const restarted = new Barrier(physical);
      await restarted.unseal(ROOT_KEY);
      expect(text(await restarted.get('k'))).to.equal('v');
    });

    it('keyStatus counts encryptions under the active term and starts again at rotation', async () => {
      const { barrier } = await unsealedBarrier();
      const before = barrier.keyStatus();
      expect(before.term).to.equal(1);
      expect(before.encryptions).to.equal(0);
      await barrier.put('a', bytes('1'));
      await barrier.batch([{ type: 'put', key: 'b', value: bytes('2') }, { type: 'delete', key: 'a' }]);
      expect(barrier.keyStatus().encryptions).to.equal(2);
      const rotated = await barrier.rotate();
      expect(rotated.encryptions).to.equal(0);
      expect(rotated.installTime.getTime()).to.be.at.least(before.installTime.getTime());
    });
  });

  describe('encryption counts and automatic rotation', () => {
    const putMany = async (barrier: Barrier, n: number) => {
      for (let i = 0; i < n; i++) await barrier.put(`k${i}`, bytes(String(i)));
    };

    it('keeps the count across a seal and unseal once flushed, and loses only what was never flushed', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await putMany(barrier, 5);
      await barrier.flushEncryptions();
      await putMany(barrier, 2);
      expect(barrier.keyStatus().encryptions).to.equal(7);
      barrier.seal();

      const restarted = new Barrier(physical);
      await restarted.unseal(ROOT_KEY);
      expect(restarted.keyStatus().encryptions, 'the two unflushed encryptions are lost').to.equal(5);
      await putMany(restarted, 1);
      await restarted.flushEncryptions();
      restarted.seal();
      await restarted.unseal(ROOT_KEY);
      expect(restarted.keyStatus().encryptions).to.equal(6);
    });

    it('stores the outgoing term\'s count at rotation and starts the new term at zero', async () => {
      const { physical, barrier } = await unsealedBarrier();
      await putMany(barrier, 3);
      await barrier.rotate();
      await putMany(barrier, 1);
      await barrier.flushEncryptions();
      const keyring = JSON.parse(referenceOpen(ROOT_KEY, (await physical.get(KEYRING_PATH))!, 'core/keyring').toString('utf8'));
      expect(keyring.Keys.map((k: { Term: number; encryptions?: number }) => [k.Term, k.encryptions])).to.deep.equal([[1, 3], [2, 1]]);
    });

    it('stores the rotation settings in the keyring with Vault\'s field names and reads them back after a restart', async () => {
      const { physical, barrier } = await unsealedBarrier();
      expect(barrier.rotationConfig()).to.deep.equal(DEFAULT_ROTATION_CONFIG);
      await barrier.setRotationConfig({ enabled: false, maxOperations: 2_000_000, intervalSeconds: 48 * 3600 });
      const keyring = JSON.parse(referenceOpen(ROOT_KEY, (await physical.get(KEYRING_PATH))!, 'core/keyring').toString('utf8'));
      expect(keyring.RotationConfig).to.deep.equal({ Disabled: true, MaxOperations: 2_000_000, Interval: 48 * 3600 * 1e9 });
      barrier.seal();
      const restarted = new Barrier(physical);
      await restarted.unseal(ROOT_KEY);
      expect(restarted.rotationConfig()).to.deep.equal({ enabled: false, maxOperations: 2_000_000, intervalSeconds: 48 * 3600 });
    });

    it('is due for rotation once the active term has encrypted more than max operations, counting unflushed ones', async () => {
      const { barrier } = await unsealedBarrier();
      await barrier.setRotationConfig({ enabled: true, maxOperations: 4, intervalSeconds: 0 });
      await putMany(barrier, 4);
      expect(barrier.rotationDue()).to.equal(undefined);
      await putMany(barrier, 1);
      expect(barrier.rotationDue()).to.equal('reached max operations');
      await barrier.rotate();
      expect(barrier.rotationDue(), 'the new term starts again').to.equal(undefined);
    });

    it('is due for rotation once the active term is older than the interval, by the injected clock', async () => {
      const clock = new ManualClock();
      const physical = new MemoryStorage();
      const barrier = new Barrier(physical, { clock });
      await barrier.initialize(ROOT_KEY);
      await barrier.unseal(ROOT_KEY);
      await barrier.setRotationConfig({ enabled: true, maxOperations: MAX_OPERATIONS_LIMIT, intervalSeconds: 24 * 3600 });
      clock.advance(24 * 3600);
      expect(barrier.rotationDue(), 'exactly the interval is not yet older than it').to.equal(undefined);
      clock.advance(1);
      expect(barrier.rotationDue()).to.equal('rotation interval reached');
      const rotated = await barrier.rotate();
      expect(rotated.installTime.getTime()).to.equal(clock.now().getTime());
      expect(barrier.rotationDue()).to.equal(undefined);
    });

    it('is never due while automatic rotation is disabled, though encryptions are still counted', async () => {
      const clock = new ManualClock();
      const barrier = new Barrier(new MemoryStorage(), { clock });
      await barrier.initialize(ROOT_KEY);
      await barrier.unseal(ROOT_KEY);
      await barrier.setRotationConfig({ enabled: false, maxOperations: 1, intervalSeconds: 24 * 3600 });
      await putMany(barrier, 3);
      clock.advance(30 * 24 * 3600);
      expect(barrier.rotationDue()).to.equal(undefined);
      expect(barrier.keyStatus().encryptions).to.equal(3);
    });

    it('reads another node\'s settings and flushed counts when it re-reads the keyring', async () => {
      const { physical, barrier: active } = await unsealedBarrier();
      const other = new Barrier(physical);
      await other.unseal(ROOT_KEY);
      await putMany(active, 3);
      await active.flushEncryptions();
      await active.setRotationConfig({ enabled: true, maxOperations: 5_000_000, intervalSeconds: 0 });
      await other.reloadKeyring();
      expect(other.rotationConfig().maxOperations).to.equal(5_000_000);
      expect(other.keyStatus().encryptions).to.equal(3);
    });

    it('a flush or settings change does not undo a rotation another node made meanwhile', async () => {
      const { physical, barrier: stale } = await unsealedBarrier();
      const rotator = new Barrier(physical);
      await rotator.unseal(ROOT_KEY);
      await rotator.rotate();
      await putMany(stale, 1);
      await stale.flushEncryptions();
      await stale.setRotationConfig({ enabled: true, maxOperations: 2_000_000, intervalSeconds: 0 });
      const fresh = new Barrier(physical);
      await fresh.unseal(ROOT_KEY);
      expect(fresh.keyStatus().term).to.equal(2);
      expect(fresh.rotationConfig().maxOperations).to.equal(2_000_000);
    });

    it('refuses a keyring whose rotation settings or counts are malformed', async () => {
      for (const tamper of [
        (doc: KeyringDoc) => (doc.RotationConfig = { Disabled: 'no', MaxOperations: 1, Interval: 0 }),
        (doc: KeyringDoc) => (doc.RotationConfig = { Disabled: false, MaxOperations: 0, Interval: 0 }),
        (doc: KeyringDoc) => (doc.RotationConfig = { Disabled: false, MaxOperations: 1, Interval: -1 }),
        (doc: KeyringDoc) => (doc.Keys[0].encryptions = -3),
        (doc: KeyringDoc) => (doc.Keys[0].encryptions = 1.5),
      ]) {
        const { physical } = await unsealedBarrier();
        const stored = (await physical.get(KEYRING_PATH))!;
        const doc = JSON.parse(referenceOpen(ROOT_KEY, stored, 'core/keyring').toString('utf8'));
        tamper(doc);
        const nonce = randomBytes(12);
        await physical.put(KEYRING_PATH, Buffer.concat([Buffer.from([0, 0, 0, 1, 2]), nonce, referenceSeal(ROOT_KEY, nonce, Buffer.from(JSON.stringify(doc)), 'core/keyring')]));
        const err = await caught(new Barrier(physical).unseal(ROOT_KEY));
        expect(err, tamper.toString()).to.be.instanceOf(IntegrityError).with.property('message', 'keyring is malformed');
      }
    });

    it('reads a keyring written before counts and settings existed as zero and the defaults', async () => {
      const { physical } = await unsealedBarrier();
      const doc = JSON.parse(referenceOpen(ROOT_KEY, (await physical.get(KEYRING_PATH))!, 'core/keyring').toString('utf8'));
      delete doc.RotationConfig;
      const nonce = randomBytes(12);
      await physical.put(KEYRING_PATH, Buffer.concat([Buffer.from([0, 0, 0, 1, 2]), nonce, referenceSeal(ROOT_KEY, nonce, Buffer.from(JSON.stringify(doc)), 'core/keyring')]));
      const barrier = new Barrier(physical);
      await barrier.unseal(ROOT_KEY);
      expect(barrier.rotationConfig()).to.deep.equal(DEFAULT_ROTATION_CONFIG);
      expect(barrier.keyStatus().encryptions).to.equal(0);
    });
  });

  describe('keyring protection', () => {
    it('refuses to read, write or delete the keyring through the data API', async () => {
      const { physical, barrier } = await unsealedBarrier();
      const keyring = Buffer.from((await physical.get(KEYRING_PATH))!);
      for (const attempt of [
        barrier.get(KEYRING_PATH),
        barrier.put(KEYRING_PATH, bytes('x')),
        barrier.put(`${KEYRING_PATH}/sub`, bytes('x')),
        barrier.delete(KEYRING_PATH),
        barrier.batch([{ type: 'put', key: 'fine', value: bytes('x') }, { type: 'delete', key: KEYRING_PATH }]),
      ]) {
        expect(await caught(attempt)).to.be.instanceOf(BadRequestError);
      }
      expect(Buffer.from((await physical.get(KEYRING_PATH))!).equals(keyring)).to.equal(true);
      expect(await physical.get('fine')).to.equal(undefined);
    });

    it('lists keys as they are in physical storage, keyring included', async () => {
      const { barrier } = await unsealedBarrier();
      await barrier.put('core/mounts', bytes('m'));
      expect(await barrier.list('core/')).to.deep.equal(['keyring', 'mounts']);
    });
  });

  it('round-trips large random values', async () => {
    const { barrier } = await unsealedBarrier();
    const value = randomBytes(1 << 20);
    await barrier.put('big', value);
    expect(Buffer.from((await barrier.get('big'))!).equals(value)).to.equal(true);
  });
});
