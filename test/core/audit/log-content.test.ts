import { expect } from 'chai';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { AuditBroker, AuditMemo } from '../../../core/audit/broker.js';
import { DEFAULT_AUDIT_RULES } from '../../../core/audit/rules.js';
import type { AuditResponseInput } from '../../../core/audit/entry.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { JsonText } from '../../../core/framework/json-text.js';
import { WasmCrypto } from '../../../wasm/index.js';
import { expectedHmac, tempDir } from './helpers.js';
import { API_AUDIT, startUnsealedServer, tempDir as serverTempDir } from '../../helpers/server.js';

const silent = pino({ level: 'silent' });
const clock = { now: () => new Date('2024-05-01T00:00:00.000Z') };

/** A request and its answer touching every part of an entry: auth, headers, nested data, unhashed keys, wrap_info, warnings. */
const input: AuditResponseInput = {
  request: {
    id: 'req-1',
    operation: 'update',
    path: 'transit/encrypt/app',
    data: {
      batch_input: [{ plaintext: 'cGxhaW4=', context: 'Y3R4' }, { plaintext: 'ünï\u2028"q"\\' }],
      nested: { deep: [1, 2.5, true, null, ['x']], empty: {}, none: [] },
      count: 3,
      ok: false,
      zero: 0,
      '10': 'numeric key first',
    },
    clientToken: 'hvs.root',
    clientTokenAccessor: 'acc-1',
    mountPoint: 'transit/',
    mountType: 'transit',
    mountAccessor: 'transit_1',
    remoteAddress: '127.0.0.1',
    headers: { 'x-trace': { values: ['t-1'], hmac: false }, 'x-secret': { values: ['s-1', 's-2'], hmac: true } },
  },
  auth: {
    clientToken: 'hvs.root',
    accessor: 'acc-1',
    displayName: 'root',
    policies: ['root'],
    tokenPolicies: ['root'],
    metadata: { team: 'a' },
    tokenType: 'service',
    tokenIssueTime: '2024-04-30T00:00:00.000Z',
  },
  nonHmacRequestKeys: ['context'],
  nonHmacResponseKeys: ['key_version'],
  response: {
    data: { batch_results: [{ ciphertext: 'vault:v1:abc', key_version: 1 }, { ciphertext: 'vault:v1:def', key_version: 'one' }] },
    warnings: ['careful'],
    wrapInfo: { token: 'hvs.wrap', accessor: 'wacc', ttl: 60, creation_time: '2024-05-01T00:00:00Z', creation_path: 'transit/encrypt/app' },
  },
  error: 'permission denied',
};

describe('audit log content', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let storage: MemoryStorage;
  let broker: AuditBroker;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    storage = new MemoryStorage();
    broker = new AuditBroker(storage, silent, clock, { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true, allowAuditLogPrefixing: true });
  });
  afterEach(async () => {
    await broker.close();
    await cleanup();
  });

  async function saltOf(path: string): Promise<string> {
    const table = JSON.parse(Buffer.from((await storage.get('core/audit'))!).toString('utf8')) as { entries: Array<{ path: string; uuid: string }> };
    const uuid = table.entries.find((e) => e.path === path)!.uuid;
    return Buffer.from((await storage.get(`audit/${uuid}/salt`))!).toString('utf8');
  }

  it('writes each entry byte for byte as Vault lays it out: every secret string HMACed, keys in order, empty fields left out', async () => {
    const file = join(dir, 'a.log');
    await broker.enable('a', { type: 'file', options: { file_path: file } });
    const memo = new AuditMemo();
    await broker.logRequest(input, memo);
    await broker.logResponse(input, memo);
    const h = (value: string) => expectedHmac(salt, value);
    const salt = await saltOf('a/');
    const auth = {
      client_token: h('hvs.root'),
      accessor: h('acc-1'),
      display_name: 'root',
      policies: ['root'],
      token_policies: ['root'],
      metadata: { team: 'a' },
      token_type: 'service',
      token_issue_time: '2024-04-30T00:00:00.000Z',
    };
    const request = {
      id: 'req-1',
      operation: 'update',
      mount_point: 'transit/',
      mount_type: 'transit',
      mount_accessor: 'transit_1',
      client_token: h('hvs.root'),
      client_token_accessor: h('acc-1'),
      path: 'transit/encrypt/app',
      data: {
        '10': h('numeric key first'),
        batch_input: [{ plaintext: h('cGxhaW4='), context: 'Y3R4' }, { plaintext: h('ünï\u2028"q"\\') }],
        nested: { deep: [1, 2.5, true, null, [h('x')]], empty: {}, none: [] },
        count: 3,
        ok: false,
        zero: 0,
      },
      remote_address: '127.0.0.1',
      headers: { 'x-trace': ['t-1'], 'x-secret': [h('s-1'), h('s-2')] },
    };
    const expected = [
      { time: '2024-05-01T00:00:00.000Z', type: 'request', auth, request },
      {
        time: '2024-05-01T00:00:00.000Z',
        type: 'response',
        auth,
        request,
        response: {
          mount_point: 'transit/',
          mount_type: 'transit',
          mount_accessor: 'transit_1',
          data: { batch_results: [{ ciphertext: h('vault:v1:abc'), key_version: 1 }, { ciphertext: h('vault:v1:def'), key_version: 'one' }] },
          warnings: ['careful'],
          wrap_info: { token: h('hvs.wrap'), accessor: h('wacc'), ttl: 60, creation_time: '2024-05-01T00:00:00Z', creation_path: 'transit/encrypt/app' },
        },
        error: h('permission denied'),
      },
    ];
    expect(await readFile(file, 'utf8')).to.equal(expected.map((e) => JSON.stringify(e) + '\n').join(''));
  });

  it('writes a batch\'s entries byte for byte through the WASM batch HMAC, its results read from the JSON text transit answers with', async () => {
    const batchBroker = new AuditBroker(storage, silent, clock, { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true }, await WasmCrypto.load());
    try {
      const file = join(dir, 'batch.log');
      await batchBroker.enable('batch', { type: 'file', options: { file_path: file } });
      const plaintexts = Array.from({ length: 40 }, (_, i) => Buffer.from(`item ${i} ü`).toString('base64'));
      const results = plaintexts.map((_, i) => ({ ciphertext: `vault:v1:c${i}`, key_version: 1, reference: i % 2 ? `ref-${i}` : '' }));
      const text = `[${results.map((r) => `{"ciphertext":"${r.ciphertext}","key_version":1,"reference":"${r.reference}"}`).join(',')}]`;
      const batch: AuditResponseInput = {
        request: { id: 'req-b', operation: 'update', path: 'transit/encrypt/app', data: { batch_input: plaintexts.map((plaintext) => ({ plaintext })) }, clientToken: 'hvs.root' },
        response: { data: { batch_results: new JsonText(text, () => JSON.parse(text)) } },
      };
      const memo = new AuditMemo();
      await batchBroker.logRequest(batch, memo);
      await batchBroker.logResponse(batch, memo);
      const h = (value: string) => expectedHmac(salt, value);
      const salt = await saltOf('batch/');
      const request = { id: 'req-b', operation: 'update', client_token: h('hvs.root'), path: 'transit/encrypt/app', data: { batch_input: plaintexts.map((p) => ({ plaintext: h(p) })) } };
      const expected = [
        { time: '2024-05-01T00:00:00.000Z', type: 'request', request },
        {
          time: '2024-05-01T00:00:00.000Z',
          type: 'response',
          request,
          response: { data: { batch_results: results.map((r) => ({ ciphertext: h(r.ciphertext), key_version: 1, reference: h(r.reference) })) } },
        },
      ];
      expect(await readFile(file, 'utf8')).to.equal(expected.map((e) => JSON.stringify(e) + '\n').join(''));
    } finally {
      await batchBroker.close();
    }
  });

  it('writes a raw device\'s entries with its prefix and every value as it is', async () => {
    const file = join(dir, 'raw.log');
    await broker.enable('raw', { type: 'file', options: { file_path: file, log_raw: 'true', prefix: 'kw ' } });
    await broker.logRequest({ request: { id: 'r', operation: 'read', path: 'kv/x', data: { a: 'b', n: [1, 'two'] }, clientToken: 't' } });
    const line = { time: '2024-05-01T00:00:00.000Z', type: 'request', request: { id: 'r', operation: 'read', client_token: 't', path: 'kv/x', data: { a: 'b', n: [1, 'two'] } } };
    expect(await readFile(file, 'utf8')).to.equal(`kw ${JSON.stringify(line)}\n`);
  });

  it('records 50 concurrent requests, every line present, in the order they were logged', async () => {
    const file = join(dir, 'busy.log');
    await broker.enable('busy', { type: 'file', options: { file_path: file } });
    const ids = Array.from({ length: 50 }, (_, i) => `req-${i}`);
    await Promise.all(ids.map((id) => broker.logRequest({ request: { id, operation: 'update', path: 'transit/encrypt/app', data: { plaintext: id } } })));
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.pop()).to.equal('');
    expect(lines.map((line) => (JSON.parse(line) as { request: { id: string } }).request.id)).to.deep.equal(ids);
  });
});

describe('audit log content, through the server', function () {
  this.timeout(30_000);

  it('refuses with 503, answering nothing of the request, once the file can no longer be written', async () => {
    const dir = await serverTempDir();
    const server = await startUnsealedServer({ audit: API_AUDIT, plugins: [] });
    try {
      const logs = join(dir.path, 'logs');
      await mkdir(logs);
      expect((await server.client.post('sys/audit/file', { type: 'file', options: { file_path: join(logs, 'audit.log') } })).status).to.equal(204);
      expect((await server.client.post('sys/mounts/kv', { type: 'kv' })).status).to.equal(204);
      expect((await server.client.put('kv/app', { password: 's3cret' })).status).to.equal(204);
      // The directory goes away and the file is reopened (log rotation): no write can succeed now.
      await rename(logs, join(dir.path, 'gone'));
      await server.host.audit.reopen();
      const reads = await Promise.all(Array.from({ length: 20 }, () => server.client.get('kv/app')));
      expect(reads.map((read) => read.status)).to.deep.equal(Array(20).fill(503));
      for (const read of reads) expect(read.text).to.not.contain('s3cret');
      const recorded = (await readFile(join(dir.path, 'gone', 'audit.log'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { type: string; request: { path: string } });
      expect(recorded.filter((entry) => entry.request.path === 'kv/app').map((entry) => entry.type)).to.deep.equal(['request', 'response']);
    } finally {
      await server.close();
      await dir.remove();
    }
  });
});
