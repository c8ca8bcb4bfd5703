import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { AuditBroker, AuditUnavailableError } from '../../../core/audit/broker.js';
import { DEFAULT_AUDIT_RULES, type AuditRules } from '../../../core/audit/rules.js';
import type { AuditInput, AuditResponseInput } from '../../../core/audit/entry.js';
import { BadRequestError, ConflictError, UnavailableError, httpStatusOf } from '../../../core/errors.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { caught, capturingLogger, expectedHmac, readEntries, tempDir } from './helpers.js';

const silent = pino({ level: 'silent' });
/** A configuration that lets the API create devices, with prefixes. */
const API_RULES: AuditRules = { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true, allowAuditLogPrefixing: true };
/** A device the operator declared: the API never opens a device node such as /dev/full. */
const declaredFull = (path: string) => ({ path, type: 'file', description: '', local: false, options: { file_path: '/dev/full' }, declaredAt: 'test.hcl:1' });
const clock = { now: () => new Date('2024-05-01T00:00:00.000Z') };

const request = (id: string, secret = 'plain-secret'): AuditInput => ({
  request: { id, operation: 'update', path: 'transit/encrypt/app', data: { plaintext: secret }, clientToken: 'hvs.root-token' },
});

describe('audit broker', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let storage: MemoryStorage;
  const brokers: AuditBroker[] = [];

  const newBroker = (logger = silent): AuditBroker => {
    const broker = new AuditBroker(storage, logger, clock, API_RULES);
    brokers.push(broker);
    return broker;
  };

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    storage = new MemoryStorage();
  });
  afterEach(async () => {
    await Promise.all(brokers.splice(0).map((b) => b.close()));
    await cleanup();
  });

  describe('table', () => {
    it('enables devices at normalized paths, lists them sorted, and disables them', async () => {
      const broker = newBroker();
      expect(broker.hasDevices()).to.equal(false);
      await broker.enable('/file', { type: 'file', description: 'main log', options: { file_path: join(dir, 'a.log') } });
      await broker.enable('second/', { type: 'file', options: { file_path: 'discard' }, local: true });
      expect(broker.hasDevices()).to.equal(true);
      expect(broker.list()).to.deep.equal([
        { path: 'file/', type: 'file', description: 'main log', options: { file_path: join(dir, 'a.log') }, local: false },
        { path: 'second/', type: 'file', description: '', options: { file_path: 'discard' }, local: true },
      ]);
      await broker.disable('file');
      expect(broker.list().map((d) => d.path)).to.deep.equal(['second/']);
      await broker.disable('second/');
      expect(broker.hasDevices()).to.equal(false);
    });

    it('disabling a path with no device does nothing', async () => {
      const broker = newBroker();
      await broker.disable('nothing-here');
      expect(broker.list()).to.deep.equal([]);
    });

    it('refuses a path in use, or one that overlaps an enabled device, with 409', async () => {
      const broker = newBroker();
      await broker.enable('file', { type: 'file', options: { file_path: 'discard' } });
      for (const path of ['file', 'file/', 'file/sub']) {
        const err = await caught(broker.enable(path, { type: 'file', options: { file_path: 'discard' } }));
        expect(err, path).to.be.instanceOf(ConflictError);
      }
      await broker.enable('logs/a', { type: 'file', options: { file_path: 'discard' } });
      expect(await caught(broker.enable('logs', { type: 'file', options: { file_path: 'discard' } }))).to.be.instanceOf(ConflictError);
    });

    it('refuses an unknown type, bad options and bad paths with 400, and stores nothing', async () => {
      const broker = newBroker();
      const cases: Array<[string, Parameters<AuditBroker['enable']>[1]]> = [
        ['sys', { type: 'syslog', options: {} }],
        ['file', { type: 'file', options: {} }],
        ['file', { type: 'file', options: { file_path: 'discard', mode: 'abc' } }],
        ['file', { type: 'file', options: { file_path: 'discard', hmac_accessor: 'perhaps' } }],
        ['../up', { type: 'file', options: { file_path: 'discard' } }],
        ['', { type: 'file', options: { file_path: 'discard' } }],
      ];
      for (const [path, input] of cases) {
        expect(await caught(broker.enable(path, input)), `${path} ${JSON.stringify(input)}`).to.be.instanceOf(BadRequestError);
      }
      expect(broker.list()).to.deep.equal([]);
      expect(await storage.list('')).to.deep.equal([]);
    });

    it('refuses a file it cannot open with 400 naming the path and the OS error, and stores nothing', async () => {
      const broker = newBroker();
      const err = await caught(broker.enable('file', { type: 'file', options: { file_path: dir } }));
      expect(httpStatusOf(err)).to.equal(400);
      expect(err.message).to.contain(dir).and.to.contain('EISDIR');
      expect(broker.hasDevices()).to.equal(false);
      expect(await storage.list('')).to.deep.equal([]);
    });

    it('persists the table at core/audit and a UUID salt per device at audit/<uuid>/salt', async () => {
      const broker = newBroker();
      await broker.enable('file', { type: 'file', options: { file_path: 'discard' } });
      const table = JSON.parse(Buffer.from((await storage.get('core/audit'))!).toString('utf8'));
      expect(table.entries).to.have.length(1);
      const [stored] = table.entries;
      expect(stored).to.include({ path: 'file/', type: 'file', description: '', local: false });
      expect(stored.uuid).to.match(/^[0-9a-f-]{36}$/);
      const salt = Buffer.from((await storage.get(`audit/${stored.uuid}/salt`))!).toString('utf8');
      expect(salt).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(await broker.hash('file', 'x')).to.equal(expectedHmac(salt, 'x'));
    });

    it('a new broker over the same storage loads the same devices with the same salts', async () => {
      const file = join(dir, 'audit.log');
      const first = newBroker();
      await first.enable('file', { type: 'file', description: 'd', options: { file_path: file, hmac_accessor: 'false' } });
      await first.enable('other', { type: 'file', options: { file_path: 'discard' } });
      const hashes = [await first.hash('file', 'hvs.root-token'), await first.hash('other', 'hvs.root-token')];
      expect(hashes[0]).to.not.equal(hashes[1]);
      await first.close();

      const second = newBroker();
      await second.load();
      expect(second.list()).to.deep.equal([
        { path: 'file/', type: 'file', description: 'd', options: { file_path: file, hmac_accessor: 'false' }, local: false },
        { path: 'other/', type: 'file', options: { file_path: 'discard' }, description: '', local: false },
      ]);
      expect([await second.hash('file', 'hvs.root-token'), await second.hash('other', 'hvs.root-token')]).to.deep.equal(hashes);
      await second.logRequest(request('after-restart'));
      const [entry] = await readEntries(file);
      expect(entry!.request.client_token).to.equal(hashes[0]);
    });

    it('disabling deletes the salt: the same path enabled again hashes differently', async () => {
      const broker = newBroker();
      await broker.enable('file', { type: 'file', options: { file_path: 'discard' } });
      const before = await broker.hash('file', 'value');
      await broker.disable('file');
      expect(await storage.list('audit/')).to.deep.equal([]);
      expect(JSON.parse(Buffer.from((await storage.get('core/audit'))!).toString('utf8'))).to.deep.equal({ entries: [] });
      await broker.enable('file', { type: 'file', options: { file_path: 'discard' } });
      expect(await broker.hash('file', 'value')).to.not.equal(before);
    });
  });

  describe('hash', () => {
    it('is the HMAC the device writes, and 400 for a path with no device', async () => {
      const file = join(dir, 'audit.log');
      const broker = newBroker();
      await broker.enable('file', { type: 'file', options: { file_path: file } });
      await broker.logRequest(request('r1', 'the plaintext'));
      const [entry] = await readEntries(file);
      expect(entry!.request.data.plaintext).to.equal(await broker.hash('file/', 'the plaintext'));
      expect(entry!.request.client_token).to.equal(await broker.hash('/file', 'hvs.root-token'));
      const err = await caught(broker.hash('nope', 'x'));
      expect(err).to.be.instanceOf(BadRequestError);
      expect(err.message).to.contain('nope/');
    });
  });

  describe('logging', () => {
    it('does nothing when no device is enabled', async () => {
      const broker = newBroker();
      await broker.logRequest(request('r'));
      await broker.logResponse({ ...request('r'), response: { data: { ok: 'yes' } } });
    });

    it('writes the request and the response to every device, each with its own salt and options', async () => {
      const a = join(dir, 'a.log');
      const b = join(dir, 'b.log');
      const broker = newBroker();
      await broker.enable('a', { type: 'file', options: { file_path: a } });
      await broker.enable('b', { type: 'file', options: { file_path: b, log_raw: 'true', prefix: 'kw ' } });
      const input: AuditResponseInput = { ...request('req-7'), response: { data: { ciphertext: 'vault:v1:xyz' } } };
      await broker.logRequest(input);
      await broker.logResponse(input);

      const hashedEntries = await readEntries(a);
      expect(hashedEntries.map((e) => [e.type, e.request.id])).to.deep.equal([['request', 'req-7'], ['response', 'req-7']]);
      expect(hashedEntries[0]!.time).to.equal('2024-05-01T00:00:00.000Z');
      expect(hashedEntries[1]!.response.data.ciphertext).to.equal(await broker.hash('a', 'vault:v1:xyz'));
      const rawEntries = await readEntries(b, 'kw ');
      expect(rawEntries[0]!.request.data.plaintext).to.equal('plain-secret');
      expect(rawEntries[1]!.response.data.ciphertext).to.equal('vault:v1:xyz');
    });

    it('when the only device cannot write, refuses with AuditUnavailableError (503) and logs which device failed', async function () {
      if (!existsSync('/dev/full')) this.skip();
      const capture = capturingLogger();
      const broker = newBroker(capture.logger);
      await broker.declare([declaredFull('full/')]);
      const err = await caught(broker.logRequest(request('r', 'never-in-the-log')));
      expect(err).to.be.instanceOf(AuditUnavailableError).and.to.be.instanceOf(UnavailableError);
      expect(err.message).to.equal('no audit device could record the request');
      expect(httpStatusOf(err)).to.equal(503);
      expect(await caught(broker.logResponse({ ...request('r'), response: {} }))).to.be.instanceOf(AuditUnavailableError);

      const failure = capture.lines.find((l) => l.device === 'full/' && l.level === 50);
      expect(failure).to.include({ device: 'full/', msg: 'audit device failed to record an entry' });
      expect(String(failure!.err)).to.contain('ENOSPC');
      expect(capture.text()).to.not.contain('never-in-the-log').and.to.not.contain('hvs.root-token').and.to.not.contain('hmac-sha256:');
    });

    it('succeeds while another device still works, and logs the one that failed', async function () {
      if (!existsSync('/dev/full')) this.skip();
      const capture = capturingLogger();
      const good = join(dir, 'good.log');
      const broker = newBroker(capture.logger);
      await broker.declare([declaredFull('full/')]);
      await broker.enable('good', { type: 'file', options: { file_path: good } });
      await broker.logRequest(request('kept'));
      expect((await readEntries(good)).map((e) => e.request.id)).to.deep.equal(['kept']);
      expect(capture.lines.some((l) => l.device === 'full/' && l.level === 50)).to.equal(true);
    });

    it('a device whose directory disappeared (after a reopen) blocks requests until it can write again', async () => {
      const sub = join(dir, 'logs');
      await mkdir(sub);
      const file = join(sub, 'audit.log');
      const broker = newBroker();
      await broker.enable('file', { type: 'file', options: { file_path: file } });
      await broker.logRequest(request('one'));
      await rename(sub, join(dir, 'rotated-away'));
      await broker.reopen();
      expect(await caught(broker.logRequest(request('two')))).to.be.instanceOf(AuditUnavailableError);

      await broker.enable('spare', { type: 'file', options: { file_path: 'discard' } });
      await broker.logRequest(request('three'));
      await broker.disable('spare');

      await mkdir(sub);
      await broker.logRequest(request('four'));
      expect((await readEntries(file)).map((e) => e.request.id)).to.deep.equal(['four']);
    });

    it('a stored device whose file cannot be opened at load is kept, logged, and blocks requests', async () => {
      const sub = join(dir, 'logs');
      await mkdir(sub);
      const first = newBroker();
      await first.enable('file', { type: 'file', options: { file_path: join(sub, 'audit.log') } });
      await first.close();
      await rename(sub, join(dir, 'gone'));

      const capture = capturingLogger();
      const second = newBroker(capture.logger);
      await second.load();
      expect(second.list().map((d) => d.path)).to.deep.equal(['file/']);
      expect(capture.lines.some((l) => l.device === 'file/' && String(l.err).includes('ENOENT'))).to.equal(true);
      expect(await caught(second.logRequest(request('r')))).to.be.instanceOf(AuditUnavailableError);
    });

    it('a stored device that can no longer be built is kept and blocks requests until disabled', async () => {
      await storage.put(
        'core/audit',
        Buffer.from(JSON.stringify({ entries: [{ path: 'old/', type: 'socket', description: '', options: {}, local: false, uuid: 'u-1' }] })),
      );
      const capture = capturingLogger();
      const broker = newBroker(capture.logger);
      await broker.load();
      expect(broker.list().map((d) => d.path)).to.deep.equal(['old/']);
      expect(await caught(broker.logRequest(request('r')))).to.be.instanceOf(AuditUnavailableError);
      await broker.disable('old');
      await broker.logRequest(request('r'));
    });

    it('holds a stored device to today\'s rules: one created with an executable mode or a prefix before them records nothing until it is disabled', async () => {
      const file = join(dir, 'old.log');
      await storage.put(
        'core/audit',
        Buffer.from(
          JSON.stringify({
            entries: [
              { path: 'exec/', type: 'file', description: '', options: { file_path: file, mode: '0777' }, local: false, uuid: 'u-1' },
              { path: 'prefixed/', type: 'file', description: '', options: { file_path: 'discard', prefix: 'x' }, local: false, uuid: 'u-2' },
            ],
          }),
        ),
      );
      const capture = capturingLogger();
      const broker = new AuditBroker(storage, capture.logger, clock, { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true });
      brokers.push(broker);
      await broker.load();
      expect(broker.list().map((d) => d.path)).to.deep.equal(['exec/', 'prefixed/']);
      expect(await caught(broker.logRequest(request('r')))).to.be.instanceOf(AuditUnavailableError);
      const refusals = capture.lines.filter((l) => l.msg === 'audit device could not be built').map((l) => `${l.device as string} ${l.err as string}`);
      expect(refusals).to.have.length(2);
      expect(refusals[0]).to.match(/^exec\/ audit device option "mode": "0777" is refused/);
      expect(refusals[1]).to.match(/^prefixed\/ audit device option "prefix": audit log prefixing is not allowed/);
      expect(existsSync(file), 'the executable file was never created').to.equal(false);
      await broker.disable('exec');
      await broker.disable('prefixed');
      await broker.logRequest(request('r'));
    });

    it('after close, has no devices and writes nothing', async () => {
      const broker = newBroker();
      await broker.enable('file', { type: 'file', options: { file_path: join(dir, 'x.log') } });
      await broker.close();
      expect(broker.hasDevices()).to.equal(false);
      await broker.logRequest(request('r'));
      expect(await readEntries(join(dir, 'x.log'))).to.deep.equal([]);
    });
  });
});
