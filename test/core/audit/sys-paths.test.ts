import { expect } from 'chai';
import { join } from 'node:path';
import { pino } from 'pino';
import { AuditBroker } from '../../../core/audit/broker.js';
import { DEFAULT_AUDIT_RULES } from '../../../core/audit/rules.js';
import { BadRequestError, ConflictError } from '../../../core/errors.js';
import { FrameworkBackend, type LogicalRequest, type LogicalResponse, type Operation } from '../../../core/framework/index.js';
import { auditPaths } from '../../../core/system/paths/audit.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { caught, expectedHmac, readEntries, tempDir } from './helpers.js';

describe('sys/audit paths', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let storage: MemoryStorage;
  let broker: AuditBroker;
  let backend: FrameworkBackend;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    storage = new MemoryStorage();
    broker = new AuditBroker(storage, pino({ level: 'silent' }), undefined, { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true });
    backend = new FrameworkBackend({ description: 'sys (audit paths only)', paths: auditPaths(() => broker) });
  });
  afterEach(async () => {
    await broker.close();
    await cleanup();
  });

  function logical(operation: Operation, path: string, data: Record<string, unknown> = {}): LogicalRequest {
    return {
      id: 'req-1',
      operation,
      path,
      data,
      storage,
      mount: { path: 'sys/', type: 'system', accessor: 'system_12345678', uuid: 'sys-uuid' },
      headers: {},
      connection: { remoteAddress: '127.0.0.1' },
    };
  }

  async function call(
    operation: Operation,
    path: string,
    data: Record<string, unknown> = {},
  ): Promise<{ response: LogicalResponse | null; sudo: boolean }> {
    const request = logical(operation, path, data);
    const prepared = await backend.prepare(request);
    return { response: await backend.execute({ ...request, operation: prepared.operation }, prepared), sudo: prepared.sudo };
  }

  it('enables a device with POST sys/audit/:path (204) and lists it keyed by path with a trailing slash', async () => {
    const file = join(dir, 'audit.log');
    const enabled = await call('update', 'audit/file', {
      type: 'file',
      description: 'the audit log',
      options: { file_path: file, hmac_accessor: false },
      local: 'false',
    });
    expect(enabled).to.deep.equal({ response: null, sudo: true });

    const listed = await call('read', 'audit');
    expect(listed.sudo).to.equal(true);
    expect(listed.response).to.deep.equal({
      data: {
        'file/': {
          type: 'file',
          description: 'the audit log',
          options: { file_path: file, hmac_accessor: 'false' },
          local: false,
          path: 'file/',
        },
      },
    });
  });

  it('lists nothing as an empty object', async () => {
    expect((await call('read', 'audit')).response).to.deep.equal({ data: {} });
  });

  it('accepts nested paths and the null values clients send', async () => {
    await call('update', 'audit/team/a', { type: 'file', description: null, options: { file_path: 'discard', prefix: null }, local: null });
    const data = (await call('read', 'audit')).response!.data!;
    expect(data['team/a/']).to.deep.equal({ type: 'file', description: '', options: { file_path: 'discard' }, local: false, path: 'team/a/' });
  });

  it('refuses an enable without a type, with an unknown type, or with bad options (400), and a used path (409)', async () => {
    const missing = await caught(call('update', 'audit/file', { options: { file_path: 'discard' } }));
    expect(missing).to.be.instanceOf(BadRequestError);
    expect(missing.message).to.contain('type');
    expect(await caught(call('update', 'audit/file', { type: 'syslog' }))).to.be.instanceOf(BadRequestError);
    expect(await caught(call('update', 'audit/file', { type: 'file', options: { file_path: dir } }))).to.be.instanceOf(BadRequestError);
    expect(await caught(call('update', 'audit/file', { type: 'file', options: { file_path: 'discard', nested: { a: 1 } } }))).to.be.instanceOf(
      BadRequestError,
    );
    await call('update', 'audit/file', { type: 'file', options: { file_path: 'discard' } });
    expect(await caught(call('update', 'audit/file', { type: 'file', options: { file_path: 'discard' } }))).to.be.instanceOf(ConflictError);
  });

  it('disables a device with DELETE (204), and deleting what is not there is fine', async () => {
    await call('update', 'audit/file', { type: 'file', options: { file_path: 'discard' } });
    expect(await call('delete', 'audit/file')).to.deep.equal({ response: null, sudo: true });
    expect((await call('read', 'audit')).response).to.deep.equal({ data: {} });
    expect((await call('delete', 'audit/file')).response).to.equal(null);
  });

  it('sys/audit-hash/:path returns the HMAC the device writes, without needing sudo', async () => {
    const file = join(dir, 'audit.log');
    await call('update', 'audit/file', { type: 'file', options: { file_path: file } });
    await broker.logRequest({ request: { id: 'r', operation: 'update', path: 'x', data: { secret: 's3cr3t' } } });
    const { response, sudo } = await call('update', 'audit-hash/file', { input: 's3cr3t' });
    expect(sudo).to.equal(false);
    const [entry] = await readEntries(file);
    expect(response).to.deep.equal({ data: { hash: entry!.request.data.secret } });

    const table = JSON.parse(Buffer.from((await storage.get('core/audit'))!).toString('utf8'));
    const salt = Buffer.from((await storage.get(`audit/${table.entries[0].uuid}/salt`))!).toString('utf8');
    expect(response!.data!.hash).to.equal(expectedHmac(salt, 's3cr3t'));
  });

  it('sys/audit-hash refuses a missing input and an unknown device with 400', async () => {
    await call('update', 'audit/file', { type: 'file', options: { file_path: 'discard' } });
    expect((await caught(call('update', 'audit-hash/file', {}))).message).to.contain('input');
    expect(await caught(call('update', 'audit-hash/other', { input: 'x' }))).to.be.instanceOf(BadRequestError);
  });

  it('has help text for every path', () => {
    const help = backend.help('audit/file').help;
    expect(help).to.contain('Enable or disable an audit device').and.to.contain('file_path').and.to.contain('`type`');
    expect(backend.describePaths().map((p) => [p.pattern, p.sudo])).to.deep.equal([
      ['audit', true],
      ['audit/:path+', true],
      ['audit-hash/:path+', false],
    ]);
  });
});
