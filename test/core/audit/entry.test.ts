import { expect } from 'chai';
import {
  EncodedJson,
  entryBytes,
  entryJson,
  formatRequestEntry,
  formatResponseEntry,
  hashStructure,
  type AuditInput,
  type AuditResponseInput,
  type EntryFormat,
} from '../../../core/audit/entry.js';
import { AuditHmac } from '../../../core/audit/salt.js';
import { JsonText } from '../../../core/framework/json-text.js';
import { expectedHmac } from './helpers.js';

const SALT = '5d3c6a9e-8f7b-4c1d-9e2a-0b1c2d3e4f50';
const TIME = new Date('2024-05-01T12:34:56.789Z');
const hashed = (value: string): string => expectedHmac(SALT, value);
const hmac = new AuditHmac(SALT);
/** An entry's data built as an object (formatRequestEntry without hashed text makes one). */
const plain = (data: Record<string, unknown> | JsonText | undefined): Record<string, any> => {
  if (data === undefined || data instanceof JsonText) throw new Error('expected data built as an object');
  return data;
};

const format = (overrides: Partial<EntryFormat> = {}): EntryFormat => ({
  hmac,
  hmacAccessor: true,
  elideListResponses: false,
  ...overrides,
});

function sampleInput(): AuditResponseInput {
  return {
    request: {
      id: 'req-1',
      operation: 'update',
      path: 'transit/encrypt/app',
      data: { plaintext: 'c2VjcmV0', context: 'ctx', count: 3, flag: true, nothing: null },
      clientToken: 'hvs.client',
      clientTokenAccessor: 'accessor-1',
      mountPoint: 'transit/',
      mountType: 'transit',
      mountAccessor: 'transit_1234abcd',
      remoteAddress: '127.0.0.1',
      remotePort: 51234,
    },
    auth: {
      clientToken: 'hvs.client',
      accessor: 'accessor-1',
      displayName: 'token-app',
      policies: ['default', 'app'],
      tokenPolicies: ['default', 'app'],
      metadata: { team: 'payments' },
      entityId: 'entity-1',
      tokenType: 'service',
      tokenTtl: 3600,
      tokenIssueTime: '2024-05-01T12:00:00Z',
      policyResults: { allowed: true, grantingPolicies: ['app'] },
    },
    response: {
      data: { ciphertext: 'vault:v1:abc', key_version: 1 },
      warnings: ['a warning'],
      status: 200,
    },
  };
}

/** Freezes a structure all the way down, so any write into the input throws. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('audit entries', () => {
  describe('request entry', () => {
    it('has Vault\'s shape, with the token, the accessors and every data string HMAC\'d', () => {
      const entry = formatRequestEntry(sampleInput(), format(), TIME);
      expect(entry).to.deep.equal({
        time: '2024-05-01T12:34:56.789Z',
        type: 'request',
        auth: {
          client_token: hashed('hvs.client'),
          accessor: hashed('accessor-1'),
          display_name: 'token-app',
          policies: ['default', 'app'],
          token_policies: ['default', 'app'],
          metadata: { team: 'payments' },
          entity_id: 'entity-1',
          token_type: 'service',
          token_ttl: 3600,
          token_issue_time: '2024-05-01T12:00:00Z',
          policy_results: { allowed: true, granting_policies: [{ name: 'app', namespace_id: 'root', type: 'acl' }] },
        },
        request: {
          id: 'req-1',
          operation: 'update',
          mount_point: 'transit/',
          mount_type: 'transit',
          mount_accessor: 'transit_1234abcd',
          client_token: hashed('hvs.client'),
          client_token_accessor: hashed('accessor-1'),
          path: 'transit/encrypt/app',
          data: { plaintext: hashed('c2VjcmV0'), context: hashed('ctx'), count: 3, flag: true, nothing: null },
          remote_address: '127.0.0.1',
          remote_port: 51234,
        },
      });
    });

    it('writes a known HMAC value: hmac-sha256 keyed with the salt string', () => {
      const entry = formatRequestEntry(
        { request: { id: 'r', operation: 'update', path: 'p', data: { v: 'hello' } } },
        format(),
        TIME,
      );
      // Computed independently: HMAC-SHA256(key = UTF-8 of the salt, message = "hello").
      expect(plain(entry.request.data).v).to.equal(expectedHmac(SALT, 'hello'));
      expect(plain(entry.request.data).v).to.match(/^hmac-sha256:[0-9a-f]{64}$/);
    });

    it('leaves out fields that are unset or empty, as Vault\'s omitempty does', () => {
      const entry = formatRequestEntry({ request: { id: 'r', operation: 'read', path: 'sys/health', data: null } }, format(), TIME);
      expect(entry).to.deep.equal({ time: TIME.toISOString(), type: 'request', request: { id: 'r', operation: 'read', path: 'sys/health' } });
      const denied = formatRequestEntry(
        { request: { id: 'r', operation: 'read', path: 'x', remotePort: 0 }, auth: { policyResults: { allowed: false, grantingPolicies: [] } } },
        format(),
        TIME,
      );
      expect(denied.auth).to.deep.equal({ policy_results: { allowed: false } });
      expect(denied.request).to.not.have.property('remote_port');
    });
  });

  describe('HMAC of data', () => {
    it('recurses into nested objects and arrays, hashing strings only and never keys', () => {
      const data = {
        outer: { inner: 'secret', list: ['a', 1, false, null, { deep: 'b' }], n: 2.5 },
        matrix: [['x', 'y'], []],
      };
      expect(hashStructure(data, hmac)).to.deep.equal({
        outer: { inner: hashed('secret'), list: [hashed('a'), 1, false, null, { deep: hashed('b') }], n: 2.5 },
        matrix: [[hashed('x'), hashed('y')], []],
      });
    });

    it('leaves a string raw when the nearest key above it is a non-HMAC key, at any depth', () => {
      const data = {
        key_name: 'app',
        tags: ['t1', 't2'],
        nested: { key_name: 'kept', other: 'hidden' },
        key_name_obj: { key_name: 'kept too' },
        plaintext: 'hidden too',
      };
      const out = hashStructure(data, hmac, ['key_name', 'tags', 'key_name_obj']) as Record<string, any>;
      expect(out.key_name).to.equal('app');
      expect(out.tags).to.deep.equal(['t1', 't2']);
      expect(out.nested).to.deep.equal({ key_name: 'kept', other: hashed('hidden') });
      // The nearest key decides, as in Vault: "key_name" inside "key_name_obj".
      expect(out.key_name_obj).to.deep.equal({ key_name: 'kept too' });
      expect(out.plaintext).to.equal(hashed('hidden too'));
    });

    it('applies the mount\'s non-HMAC request keys to request data and response keys to response data', () => {
      const input: AuditResponseInput = {
        ...sampleInput(),
        nonHmacRequestKeys: ['context'],
        nonHmacResponseKeys: ['ciphertext'],
      };
      const entry = formatResponseEntry(input, format(), TIME);
      expect(entry.request.data).to.include({ context: 'ctx', plaintext: hashed('c2VjcmV0') });
      expect(entry.response!.data).to.deep.equal({ ciphertext: 'vault:v1:abc', key_version: 1 });
    });

    it('turns dates and bytes into their JSON text before hashing them', () => {
      const out = hashStructure({ at: new Date('2024-01-02T03:04:05.000Z'), raw: Uint8Array.from([1, 2, 3]) }, hmac);
      expect(out).to.deep.equal({ at: hashed('2024-01-02T03:04:05.000Z'), raw: hashed('AQID') });
    });
  });

  describe('hmac_accessor', () => {
    it('when false, leaves accessors readable and still hashes tokens', () => {
      const input: AuditResponseInput = {
        ...sampleInput(),
        response: { auth: { client_token: 'hvs.new', accessor: 'new-accessor', policies: ['default'] } },
      };
      const entry = formatResponseEntry(input, format({ hmacAccessor: false }), TIME);
      expect(entry.auth).to.include({ client_token: hashed('hvs.client'), accessor: 'accessor-1' });
      expect(entry.request).to.include({ client_token: hashed('hvs.client'), client_token_accessor: 'accessor-1' });
      expect(entry.response!.auth).to.deep.equal({ client_token: hashed('hvs.new'), accessor: 'new-accessor', policies: ['default'] });
    });
  });

  describe('response entry', () => {
    it('repeats the request and adds the response: data hashed, login token and accessor hashed, metadata readable', () => {
      const input: AuditResponseInput = {
        ...sampleInput(),
        response: {
          data: { ciphertext: 'vault:v1:abc', key_version: 1 },
          warnings: ['a warning'],
          auth: {
            client_token: 'hvs.minted',
            accessor: 'minted-accessor',
            policies: ['default', 'app'],
            metadata: { role: 'web', account: '123456789012' },
            lease_duration: 3600,
            renewable: true,
            entity_id: 'entity-9',
          },
        },
      };
      const entry = formatResponseEntry(input, format(), TIME);
      expect(entry.type).to.equal('response');
      expect(entry.time).to.equal(TIME.toISOString());
      expect(entry.request).to.deep.equal(formatRequestEntry(input, format(), TIME).request);
      expect(entry.auth).to.deep.equal(formatRequestEntry(input, format(), TIME).auth);
      expect(entry.response).to.deep.equal({
        mount_point: 'transit/',
        mount_type: 'transit',
        mount_accessor: 'transit_1234abcd',
        auth: {
          client_token: hashed('hvs.minted'),
          accessor: hashed('minted-accessor'),
          policies: ['default', 'app'],
          metadata: { role: 'web', account: '123456789012' },
          lease_duration: 3600,
          renewable: true,
          entity_id: 'entity-9',
        },
        data: { ciphertext: hashed('vault:v1:abc'), key_version: 1 },
        warnings: ['a warning'],
      });
      expect(entry).to.not.have.property('error');
    });

    it('hashes the error text', () => {
      const entry = formatResponseEntry({ ...sampleInput(), response: undefined, error: 'permission denied' }, format(), TIME);
      expect(entry.error).to.equal(hashed('permission denied'));
    });

    it('with elide_list_responses, writes the number of keys of a list instead of the keys', () => {
      const input: AuditResponseInput = {
        request: { id: 'r', operation: 'list', path: 'transit/keys/' },
        response: { data: { keys: ['a', 'b', 'c'], key_info: { a: {}, b: {} }, other: 'x' } },
      };
      expect(formatResponseEntry(input, format({ elideListResponses: true }), TIME).response!.data).to.deep.equal({
        keys: 3,
        key_info: 2,
        other: hashed('x'),
      });
      const read = { ...input, request: { ...input.request, operation: 'read' } };
      expect(plain(formatResponseEntry(read, format({ elideListResponses: true }), TIME).response!.data).keys).to.deep.equal(
        ['a', 'b', 'c'].map(hashed),
      );
      expect(plain(formatResponseEntry(input, format(), TIME).response!.data).keys).to.have.length(3);
    });
  });

  describe('log_raw', () => {
    it('without a hash function, writes every value as it is', () => {
      const input = sampleInput();
      const entry = formatResponseEntry({ ...input, error: 'boom' }, format({ hmac: undefined }), TIME);
      expect(entry.request).to.include({ client_token: 'hvs.client', client_token_accessor: 'accessor-1' });
      expect(entry.request.data).to.deep.equal(input.request.data);
      expect(entry.auth).to.include({ client_token: 'hvs.client', accessor: 'accessor-1' });
      expect(entry.error).to.equal('boom');
    });
  });

  describe('inputs', () => {
    it('are never modified, and the entry shares no object with them', () => {
      const input: AuditResponseInput = {
        ...sampleInput(),
        response: {
          data: { nested: { list: ['x', { y: 'z' }] } },
          auth: { client_token: 't', accessor: 'a', metadata: { m: 'v' }, policies: ['p'] },
          warnings: ['w'],
        },
        error: 'e',
      };
      const before = structuredClone(input);
      deepFreeze(input);
      const request = formatRequestEntry(input, format(), TIME);
      const response = formatResponseEntry(input, format(), TIME);
      const raw = formatResponseEntry(input, format({ hmac: undefined, elideListResponses: true }), TIME);
      expect(input).to.deep.equal(before);

      // Editing the raw copy (nothing hashed, so the most likely to alias) leaves the input alone.
      (plain(raw.response!.data).nested as any).list[1].y = 'changed';
      (raw.response!.auth!.metadata as any).m = 'changed';
      raw.auth!.policies!.push('changed');
      raw.auth!.metadata!.team = 'changed';
      plain(raw.request.data).plaintext = 'changed';
      expect(input).to.deep.equal(before);
      expect(request.request.data).to.not.equal(input.request.data);
      expect(response.response!.warnings).to.not.equal(input.response!.warnings);
    });
  });

  it('a request entry with no request data and no auth still carries id, operation and path', () => {
    const input: AuditInput = { request: { id: 'only', operation: 'delete', path: 'sys/audit/file' } };
    expect(formatRequestEntry(input, format(), TIME).request).to.deep.equal({ id: 'only', operation: 'delete', path: 'sys/audit/file' });
  });
  describe('lines in parts', () => {
    it('carries a large hashed body as one part, encoded once, in both of a request\'s lines, the bytes those of its JSON text', () => {
      const text = JSON.stringify({ batch_input: Array.from({ length: 200 }, (_, i) => ({ plaintext: hashed(`p${i}`) })) });
      const data = new EncodedJson([text]);
      const request = formatRequestEntry(sampleInput(), format(), TIME, { requestData: data });
      const response = formatResponseEntry(sampleInput(), format(), TIME, { requestData: data });
      const requestLine = entryBytes(request, 'kw ', '\n');
      const responseLine = entryBytes(response, '', '\n');
      expect(requestLine.filter((part) => part === data.bytes[0])).to.have.length(1);
      expect(responseLine.filter((part) => part === data.bytes[0])).to.have.length(1);
      expect(Buffer.concat(requestLine).toString('utf8')).to.equal(`kw ${entryJson(request)}\n`);
      expect(Buffer.concat(responseLine).toString('utf8')).to.equal(`${entryJson(response)}\n`);
    });

    it('carries a large body holding characters beyond ASCII as its UTF-8, and an ASCII one byte for byte', () => {
      for (const word of ['ünï\u2028 \u{1F511}', 'plain']) {
        const text = JSON.stringify({ batch_input: Array.from({ length: 200 }, (_, i) => ({ context: `${word} ${i}`, plaintext: hashed(`p${i}`) })) });
        // Two runs, as the HMAC pass makes them (never inside a character): each is encoded on its own.
        const data = new EncodedJson([text.slice(0, 1000), text.slice(1000)]);
        expect(Buffer.concat(data.bytes).equals(Buffer.from(text, 'utf8')), word).to.equal(true);
        const line = entryBytes(formatRequestEntry(sampleInput(), format(), TIME, { requestData: data }), '', '\n');
        expect(Buffer.concat(line).toString('utf8'), word).to.equal(`${entryJson(formatRequestEntry(sampleInput(), format(), TIME, { requestData: data }))}\n`);
      }
    });
  });
});
