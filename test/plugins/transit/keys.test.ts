/** Transit key management: creation of every type, the read body, config rules, rotation, trim, deletion, cache. */
import { expect } from 'chai';
import { TransitHarness } from './harness.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';

class StepClock {
  current = Date.UTC(2026, 0, 1);
  now(): Date {
    return new Date(this.current);
  }
  advance(seconds: number): void {
    this.current += seconds * 1000;
  }
}

describe('transit keys', function () {
  this.timeout(60_000);
  let t: TransitHarness;
  const clock = new StepClock();

  before(async () => {
    t = await TransitHarness.create({ clock });
  });

  describe('creation', () => {
    const types = ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048', 'rsa-3072', 'rsa-4096', 'hmac'];
    for (const type of types) {
      it(`creates a ${type} key and reads it back without private material`, async () => {
        const created = await t.write(`keys/k-${type}`, { type });
        expect(created.status, created.error).to.equal(200);
        const read = await t.read(`keys/k-${type}`);
        expect(read.data).to.include({ name: `k-${type}`, type, latest_version: 1, min_decryption_version: 1, min_encryption_version: 0 });
        const text = JSON.stringify(read.data);
        expect(text).to.not.match(/PRIVATE KEY/);
        if (type === 'hmac') {
          expect(read.data).to.not.have.property('keys');
          expect(read.data.key_size).to.equal(32);
        } else if (type.startsWith('aes') || type.startsWith('chacha')) {
          expect(read.data.keys['1']).to.be.a('number');
        } else {
          const v1 = read.data.keys['1'];
          expect(v1.public_key).to.be.a('string').and.not.equal('');
          expect(v1.creation_time).to.be.a('string');
          if (type === 'ed25519') expect(Buffer.from(v1.public_key, 'base64')).to.have.length(32);
          else expect(v1.public_key).to.match(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
        }
      });
    }

    it('reports what each type supports', async () => {
      expect((await t.read('keys/k-aes256-gcm96')).data).to.include({ supports_encryption: true, supports_decryption: true, supports_signing: false, supports_derivation: true });
      expect((await t.read('keys/k-ecdsa-p256')).data).to.include({ supports_encryption: false, supports_signing: true, supports_derivation: false });
      expect((await t.read('keys/k-rsa-2048')).data).to.include({ supports_encryption: true, supports_signing: true });
    });

    it('defaults to aes256-gcm96 and gives every version its own HMAC key', async () => {
      await t.write('keys/plain');
      await t.write('keys/plain/rotate');
      const store = new KeyStore(t.storage, 0);
      const policy = (await store.get('plain'))!;
      expect(policy.settings.type).to.equal('aes256-gcm96');
      const [v1, v2] = [policy.versions.get(1)!, policy.versions.get(2)!];
      expect(v1.hmacKey).to.have.length(32);
      expect(v1.hmacKey.equals(v2.hmacKey)).to.equal(false);
      expect(v1.key!.equals(v2.key!)).to.equal(false);
    });

    it('returns the existing key with a warning when it already exists', async () => {
      const again = await t.write('keys/plain', { type: 'rsa-2048' });
      expect(again.status).to.equal(200);
      expect(again.data.type).to.equal('aes256-gcm96');
      expect(again.warnings).to.deep.equal(['key plain already existed']);
    });

    it('sizes hmac keys from key_size within 32–512 bytes and refuses key_size elsewhere', async () => {
      expect((await t.write('keys/h64', { type: 'hmac', key_size: 64 })).data.key_size).to.equal(64);
      expect((await t.write('keys/h-small', { type: 'hmac', key_size: 16 })).error).to.equal('invalid key_size 16');
      expect((await t.write('keys/h-big', { type: 'hmac', key_size: 513 })).status).to.equal(400);
      expect((await t.write('keys/aes-sized', { key_size: 64 })).error).to.equal('key_size is not valid for algorithm aes256-gcm96');
      const store = new KeyStore(t.storage, 0);
      expect((await store.get('h64'))!.versions.get(1)!.key).to.have.length(64);
    });

    it('refuses bad creation settings with 400', async () => {
      expect((await t.write('keys/x1', { type: 'des' })).status).to.equal(400);
      expect((await t.write('keys/x2', { convergent_encryption: true })).error).to.equal('convergent encryption requires derivation to be enabled');
      expect((await t.write('keys/x3', { type: 'ecdsa-p256', derived: true })).status).to.equal(400);
      expect((await t.write('keys/x4', { auto_rotate_period: '30m' })).error).to.equal('auto rotate period must be 0 to disable or at least an hour');
      expect((await t.write('keys/x5', { type: 'managed_key' })).error).to.match(/no managed-key backend is configured/);
      expect((await t.write('keys/x6', { managed_key_name: 'hsm' })).status).to.equal(400);
      expect((await t.write('keys/bad name!')).status).to.equal(400);
    });

    it('shows kdf and convergent settings for derived keys', async () => {
      const res = await t.write('keys/conv', { derived: true, convergent_encryption: true });
      expect(res.data).to.include({ derived: true, kdf: 'hkdf_sha256', convergent_encryption: true, convergent_encryption_version: -1 });
    });

    it('shows the derived public key of a derived ed25519 key for a context', async () => {
      await t.write('keys/ed-derived', { type: 'ed25519', derived: true });
      expect((await t.read('keys/ed-derived')).data.keys['1'].public_key).to.equal('');
      const a = (await t.read('keys/ed-derived', { context: Buffer.from('tenant-a').toString('base64') })).data.keys['1'].public_key;
      const b = (await t.read('keys/ed-derived', { context: Buffer.from('tenant-b').toString('base64') })).data.keys['1'].public_key;
      expect(Buffer.from(a, 'base64')).to.have.length(32);
      expect(a).to.not.equal(b);
    });

    it('lists keys', async () => {
      const res = await t.request('list', 'keys/');
      expect(res.data.keys).to.include.members(['plain', 'k-hmac', 'conv']);
    });
  });

  describe('config', () => {
    before(async () => {
      await t.write('keys/cfg');
      for (let i = 0; i < 4; i++) await t.write('keys/cfg/rotate');
    });

    it('moves min_decryption_version and min_encryption_version within the rules', async () => {
      const ok = await t.write('keys/cfg/config', { min_decryption_version: 2, min_encryption_version: 3 });
      expect(ok.status).to.equal(200);
      expect(ok.data).to.include({ min_decryption_version: 2, min_encryption_version: 3, latest_version: 5 });
      expect(Object.keys(ok.data.keys)).to.deep.equal(['2', '3', '4', '5']);
      expect((await t.write('keys/cfg/config', { min_decryption_version: 6 })).error).to.equal('cannot set min decryption version of 6, latest key version is 5');
      expect((await t.write('keys/cfg/config', { min_encryption_version: 1 })).error).to.match(/must be greater than or equal to min decryption version of 2/);
      expect((await t.write('keys/cfg/config', { min_decryption_version: -1 })).status).to.equal(400);
    });

    it('forces a min_decryption_version of 0 to 1 with Vault\'s warning', async () => {
      const res = await t.write('keys/cfg/config', { min_decryption_version: 0, min_encryption_version: 0 });
      expect(res.data.min_decryption_version).to.equal(1);
      expect(res.warnings[0]).to.contain('forcing minimum to 1');
    });

    it('keeps exportable and allow_plaintext_backup on once set, refusing a request to turn either off', async () => {
      await t.write('keys/cfg/config', { exportable: true, allow_plaintext_backup: true });
      expect(await t.write('keys/cfg/config', { exportable: false })).to.include({ status: 400, error: 'exportable is set on this key and cannot be turned off' });
      expect(await t.write('keys/cfg/config', { allow_plaintext_backup: false, deletion_allowed: true })).to.include({
        status: 400,
        error: 'allow_plaintext_backup is set on this key and cannot be turned off',
      });
      const res = await t.write('keys/cfg/config', { exportable: true, allow_plaintext_backup: true });
      expect(res.data).to.include({ exportable: true, allow_plaintext_backup: true, deletion_allowed: false });
    });

    it('accepts an auto_rotate_period of 0 or at least an hour, unchanged when omitted', async () => {
      expect((await t.write('keys/cfg/config', { auto_rotate_period: '24h' })).data.auto_rotate_period).to.equal(86400);
      expect((await t.write('keys/cfg/config', { deletion_allowed: false })).data.auto_rotate_period).to.equal(86400);
      expect((await t.write('keys/cfg/config', { auto_rotate_period: '59m' })).status).to.equal(400);
      expect((await t.write('keys/cfg/config', { auto_rotate_period: 0 })).data.auto_rotate_period).to.equal(0);
    });

    it('refuses to encrypt with a version below min_decryption_version (nothing could decrypt it)', async () => {
      await t.write('keys/cfg/config', { min_decryption_version: 3 });
      const res = await t.write('encrypt/cfg', { plaintext: 'aGk=', key_version: 2 });
      expect(res.status).to.equal(400);
      expect(res.error).to.contain('minimum decryption key version');
      await t.write('keys/cfg/config', { min_decryption_version: 1 });
    });

    it('refuses config on a missing key', async () => {
      expect((await t.write('keys/nope/config', { deletion_allowed: true })).error).to.equal('no existing key named nope could be found');
    });
  });

  describe('deletion', () => {
    it('refuses to delete until deletion_allowed, then deletes the key and its versions', async () => {
      await t.write('keys/doomed');
      await t.write('keys/doomed/rotate');
      const refused = await t.request('delete', 'keys/doomed');
      expect(refused.error).to.equal('error deleting policy doomed: deletion is not allowed for this key');
      await t.write('keys/doomed/config', { deletion_allowed: true });
      expect((await t.request('delete', 'keys/doomed')).status).to.equal(204);
      expect((await t.read('keys/doomed')).status).to.equal(404);
      expect(await t.storage.list('versions/doomed/')).to.deep.equal([]);
      expect((await t.request('delete', 'keys/doomed')).error).to.match(/not found/);
    });
  });

  describe('trim', () => {
    it('deletes versions below min_available_version under Vault\'s rules', async () => {
      await t.write('keys/trimmed');
      for (let i = 0; i < 4; i++) await t.write('keys/trimmed/rotate');
      expect((await t.write('keys/trimmed/trim', { min_available_version: 2 })).error).to.equal(
        'minimum available version cannot be set when minimum encryption version is not set',
      );
      await t.write('keys/trimmed/config', { min_decryption_version: 3, min_encryption_version: 4 });
      expect((await t.write('keys/trimmed/trim', { min_available_version: 4 })).error).to.equal('minimum available version cannot be greater than minimum decryption version');
      expect((await t.write('keys/trimmed/trim', { min_available_version: 0 })).status).to.equal(400);
      const res = await t.write('keys/trimmed/trim', { min_available_version: 3 });
      expect(res.status).to.equal(200);
      expect(res.data.min_available_version).to.equal(3);
      expect((await t.storage.list('versions/trimmed/')).sort()).to.deep.equal(['3', '4', '5']);
      expect((await t.write('keys/trimmed/trim', { min_available_version: 2 })).error).to.equal('minimum available version cannot be decremented');
      expect((await t.write('keys/trimmed/config', { min_decryption_version: 2 })).status).to.equal(400);
      expect((await t.write('keys/trimmed/trim', {})).status).to.equal(400);
    });
  });

  describe('rotation', () => {
    it('adds versions, keeps hmac key sizes, and refuses unknown keys', async () => {
      const res = await t.write('keys/h64/rotate');
      expect(res.data.latest_version).to.equal(2);
      const store = new KeyStore(t.storage, 0);
      expect((await store.get('h64'))!.versions.get(2)!.key).to.have.length(64);
      expect((await t.write('keys/ghost/rotate')).error).to.equal('key not found');
    });

    it('never loses a version when rotations run concurrently', async () => {
      await t.write('keys/busy');
      await Promise.all(Array.from({ length: 10 }, () => t.write('keys/busy/rotate')));
      expect((await t.read('keys/busy')).data.latest_version).to.equal(11);
      expect(await t.storage.list('versions/busy/')).to.have.length(11);
    });

    it('rotates keys whose auto_rotate_period has passed, from the periodic hook', async () => {
      await t.write('keys/auto', { auto_rotate_period: '1h' });
      await t.backend.periodic!();
      expect((await t.read('keys/auto')).data.latest_version).to.equal(1);
      clock.advance(3601);
      await t.backend.periodic!();
      expect((await t.read('keys/auto')).data.latest_version).to.equal(2);
      await t.backend.periodic!();
      expect((await t.read('keys/auto')).data.latest_version).to.equal(2);
    });
  });

  describe('engine configuration', () => {
    it('reads and writes disable_upsert', async () => {
      expect((await t.read('config/keys')).data).to.deep.equal({ disable_upsert: false });
      expect((await t.write('config/keys', { disable_upsert: true })).data).to.deep.equal({ disable_upsert: true });
      expect((await t.read('config/keys')).data).to.deep.equal({ disable_upsert: true });
      await t.write('config/keys', { disable_upsert: false });
    });

    it('refuses cache sizes 1–9 and applies a new size only after a reload', async () => {
      expect((await t.write('cache-config', { size: 5 })).error).to.equal('size must be 0 or a value greater or equal to 10');
      const set = await t.write('cache-config', { size: 20 });
      expect(set.data).to.deep.equal({ size: 20 });
      expect(set.warnings[0]).to.match(/reloaded/);
      const before = await t.read('cache-config');
      expect(before.data.size).to.equal(20);
      expect(before.warnings).to.have.length(1);
      await t.reload();
      const after = await t.read('cache-config');
      expect(after.data.size).to.equal(20);
      expect(after.warnings).to.deep.equal([]);
      expect((await t.read('keys/plain')).data.latest_version).to.equal(2);
    });
  });
});
