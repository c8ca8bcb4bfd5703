/** Pure pieces of ec2 login: role-tag format and HMAC, identity documents, the per-key lock, the server flag. */
import { expect } from 'chai';
import { BadRequestError } from '../../../core/errors.js';
import { parseConfig } from '../../../core/config/config.js';
import {
  RoleTagError,
  createRoleTag,
  parseRoleTag,
  roleTagHmac,
  roleTagPlaintext,
  serializeRoleTag,
  tagPolicies,
  tagPoliciesAllowed,
  type RoleTag,
} from '../../../plugins/cloud-auth/role-tag.js';
import { parseIdentityDocument } from '../../../plugins/cloud-auth/identity-document.js';
import { KeyedLock } from '../../../sdk/index.js';
import { tagFromPath } from '../../../plugins/cloud-auth/deny-list.js';

/** The key and nonce of role-tag vectors computed apart from the code: HMAC-SHA-256 of the canonical form (docs/cloud-auth.md, "Role tags"). */
const KEY = '4d6f8c0e-2a1b-4c3d-9e8f-0123456789ab';
const NONCE = '09Vp0qGuyB8=';
const base: RoleTag = { nonce: NONCE, role: 'dev-role', disallowReauthentication: false, allowInstanceMigration: false, policies: [], instanceId: '', maxTtl: 0 };

describe('cloud auth ec2 units', () => {
  describe('role tags', () => {
    it('serialise exactly as the reference vectors, HMAC-SHA-256 with the role key', () => {
      expect(serializeRoleTag(base, KEY)).to.equal('v1:09Vp0qGuyB8=:r=dev-role:d=false:m=false:XZvnqwiCER9MPkvTwyf56xX+JvENLFtGD6smz2vIZ9A=');
      expect(serializeRoleTag({ ...base, policies: ['default', 'dev-api'], maxTtl: 3600 }, KEY)).to.equal(
        'v1:09Vp0qGuyB8=:r=dev-role:d=false:m=false:p=default,dev-api:t=3600:anUN9gx6Yar0YIUlFhR8Q5QEGXi3eTM7wUsX4FvUNBs=',
      );
      expect(serializeRoleTag({ ...base, disallowReauthentication: true, policies: ['default'], instanceId: 'i-0123456789abcdef0', maxTtl: 1080000 }, KEY)).to.equal(
        'v1:09Vp0qGuyB8=:r=dev-role:d=true:m=false:p=default:i=i-0123456789abcdef0:t=1080000:5PNT4bi5eX5CnjsEaJmKvqBXrr0tLdKR50h8JI/B3+E=',
      );
    });

    it('parse back to the same fields, and the HMAC covers everything before the last colon', () => {
      const tag: RoleTag = { ...base, allowInstanceMigration: true, policies: ['a', 'b'], instanceId: 'i-1', maxTtl: 60 };
      const value = serializeRoleTag(tag, KEY);
      const { hmac, ...parsed } = parseRoleTag(value);
      expect(parsed).to.deep.equal(tag);
      expect(hmac).to.equal(roleTagHmac(roleTagPlaintext(tag), KEY));
      expect(value.slice(0, value.lastIndexOf(':'))).to.equal(roleTagPlaintext(tag));
    });

    it('refuse malformed values with a message that names the problem', () => {
      const cases: [string, string][] = [
        ['v1:abc:r=x', 'invalid tag'],
        ['v2:abc:r=x:d=false:hmac', 'invalid role tag version'],
        ['v1:abc:d=false:m=false:hmac', 'missing role name'],
        ['v1:abc:r=x:z=1:hmac', 'unrecognized item "z=1" in tag'],
        ['v1:abc:r=x:d=maybe:hmac', 'invalid item "d=maybe" in tag'],
        ['v1:abc:r=x:t=300h0m0s:hmac', 'invalid item "t=300h0m0s" in tag: max_ttl must be whole seconds'],
      ];
      for (const [value, message] of cases) expect(() => parseRoleTag(value), value).to.throw(RoleTagError, message);
    });

    it('clean policies: trimmed, lower-cased, sorted, unique, root alone, and an empty list means only default', () => {
      expect(tagPolicies([' Web', 'api', 'web', ''])).to.deep.equal(['api', 'web']);
      expect(tagPolicies(['web', 'root'])).to.deep.equal(['root']);
      expect(tagPolicies([])).to.deep.equal(['default']);
      expect(tagPoliciesAllowed(['default', 'web'], ['web'])).to.equal(true);
      expect(tagPoliciesAllowed(['admin'], ['web'])).to.equal(false);
    });

    it('are made so that neither the value nor its base64 holds "//" (it could not be named in a path)', () => {
      for (let i = 0; i < 300; i++) {
        const value = createRoleTag({ role: 'r', disallowReauthentication: false, allowInstanceMigration: false, policies: [], instanceId: '', maxTtl: 0 }, `key-${i}`);
        expect(value).not.to.contain('//');
        expect(Buffer.from(value).toString('base64')).not.to.contain('//');
        expect(parseRoleTag(value).nonce).to.match(/^[A-Za-z0-9+/]{11}=$/);
      }
    });

    it('are read from a deny-list path as is or in base64', () => {
      const value = serializeRoleTag(base, KEY);
      expect(tagFromPath(value)).to.equal(value);
      expect(tagFromPath(Buffer.from(value).toString('base64'))).to.equal(value);
      expect(tagFromPath(Buffer.from(value).toString('base64url'))).to.equal(value);
      expect(tagFromPath('not-a-tag')).to.equal('not-a-tag');
    });
  });

  describe('identity documents', () => {
    const doc = { instanceId: 'i-1', imageId: 'ami-1', accountId: '1', region: 'us-east-1', pendingTime: '2024-01-01T00:00:00Z', extra: 1 };

    it('give the fields a login reads', () => {
      expect(parseIdentityDocument(Buffer.from(JSON.stringify(doc)))).to.deep.equal({
        instanceId: 'i-1', imageId: 'ami-1', accountId: '1', region: 'us-east-1', pendingTime: '2024-01-01T00:00:00Z',
      });
      expect(parseIdentityDocument(Buffer.from(JSON.stringify({ ...doc, imageId: undefined }))).imageId).to.equal('');
    });

    it('refuse what is not a document: not JSON, not an object, missing or non-string fields', () => {
      const cases: [string, RegExp][] = [
        ['{', /is not JSON/],
        ['[1]', /is not a JSON object/],
        [JSON.stringify({ ...doc, instanceId: undefined }), /has no instanceId/],
        [JSON.stringify({ ...doc, region: 7 }), /region is not a string/],
      ];
      for (const [text, message] of cases) expect(() => parseIdentityDocument(Buffer.from(text)), text).to.throw(BadRequestError, message);
    });
  });

  describe('the per-key lock', () => {
    it('runs work on one key one at a time, in order, other keys alongside, and forgets idle keys', async () => {
      const lock = new KeyedLock();
      const log: string[] = [];
      const step = (name: string, ms: number) => async () => {
        log.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${name}-`);
        return name;
      };
      const results = await Promise.all([lock.run('a', step('a1', 20)), lock.run('a', step('a2', 1)), lock.run('b', step('b1', 5))]);
      expect(results).to.deep.equal(['a1', 'a2', 'b1']);
      expect(log.indexOf('a2+')).to.be.greaterThan(log.indexOf('a1-'));
      expect(log.indexOf('b1+')).to.be.lessThan(log.indexOf('a1-'));
      expect(lock.size).to.equal(0);
    });

    it('releases a key when the work throws', async () => {
      const lock = new KeyedLock();
      await lock.run('a', async () => { throw new Error('boom'); }).catch(() => undefined);
      expect(await lock.run('a', async () => 'next')).to.equal('next');
      expect(lock.size).to.equal(0);
    });
  });

  describe('the server flag', () => {
    const minimal = { storage: { inmem: {} }, listener: { tcp: { tls_disable: true } } };

    it('cloud_auth.allow_sha1_signatures is off unless set, and takes Vault-style booleans', () => {
      expect(parseConfig(minimal, '/').cloudAuth).to.equal(undefined);
      expect(parseConfig({ ...minimal, cloud_auth: {} }, '/').cloudAuth).to.deep.equal({ allowSha1Signatures: false });
      expect(parseConfig({ ...minimal, cloud_auth: { allow_sha1_signatures: 'true' } }, '/').cloudAuth).to.deep.equal({ allowSha1Signatures: true });
      expect(() => parseConfig({ ...minimal, cloud_auth: { allow_sha1: true } }, '/')).to.throw(/cloud_auth.*allow_sha1/);
    });
  });
});
