/**
 * The audit entry's HMAC pass works in slices: however many strings a body holds, other clients'
 * requests are served in between (counted in turns of the event loop, never in time), and the
 * text is exactly what one pass in one go makes, and what JSON.stringify writes for the hashed copy.
 */
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { hashToJson, hashToJsonRuns } from '../../../core/audit/hash-structure.js';
import { AuditHmac, HMAC_PREFIX, identifiedHmac, type HmacKernel } from '../../../core/audit/salt.js';
import { WasmCrypto } from '../../../wasm/index.js';
import { JsonText } from '../../../core/framework/json-text.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { API_AUDIT, startUnsealedServer, tempDir } from '../../helpers/server.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';
import { pino } from 'pino';
import { AuditBroker, AuditMemo } from '../../../core/audit/broker.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { DEFAULT_AUDIT_RULES } from '../../../core/audit/rules.js';
import { FileAuditDevice } from '../../../core/audit/file-device.js';
import { EncodedJson, entryBytes, type AuditEntry } from '../../../core/audit/entry.js';

const SALT = '0c6f3b1e-2d4a-4b8c-9e7f-112233445566';
/** Far more turns than a pass done in one go gives (none). */
const MANY_TURNS = 10;

/** The text the sliced pass makes, its runs joined. */
async function hashedInSlices(value: unknown, hmac: AuditHmac, nonHmacKeys: readonly string[] = []): Promise<string | undefined> {
  return (await hashToJsonRuns(value, hmac, nonHmacKeys))?.join('');
}

describe('audit HMAC pass', function () {
  this.timeout(60_000);

  it('hashes a body of 300,000 strings in slices, with turns of the event loop between them, as one pass would', async () => {
    const body = { batch_input: Array.from({ length: 300_000 }, (_, i) => ({ plaintext: `p${i}`, context: 'c' })), keep: ['raw'] };
    const hmac = new AuditHmac(SALT);
    const { result, turns } = await turnsDuring(() => hashedInSlices(body, hmac, ['keep', 'context']));
    expect(turns).to.be.at.least(MANY_TURNS);
    expect(result).to.equal(hashToJson(body, hmac, ['keep', 'context']));
    const out = JSON.parse(result!) as { batch_input: Array<{ plaintext: string; context: string }>; keep: string[] };
    expect(out.batch_input[123_456]!.plaintext).to.equal(identifiedHmac(SALT, 'p123456'));
    expect(out.batch_input[0]!.context).to.equal('c');
    expect(out.keep).to.deep.equal(['raw']);
  });

  it('gives a body hashed in slices as the UTF-8 bytes of its runs, which hold its text exactly, non-ASCII included', async () => {
    // A large entry lives until its line is written: as bytes, it is kept outside V8's heap.
    const body = { batch_input: Array.from({ length: 100_000 }, (_, i) => ({ plaintext: `p${i}`, 'clé €': 'ü' })), keep: ['naïve ✓'] };
    const hmac = new AuditHmac(SALT);
    const pending = hashToJsonRuns(body, hmac, ['keep']);
    expect(pending).to.be.instanceOf(Promise);
    const runs = (await pending)! as Buffer[];
    expect(runs.length).to.be.above(10);
    for (const run of runs) expect(run).to.be.instanceOf(Buffer);
    const text = Buffer.concat(runs).toString('utf8');
    expect(text).to.equal(hashToJson(body, hmac, ['keep']));
    expect(JSON.parse(text).keep).to.deep.equal(['naïve ✓']);
    // The entry's data made of them reads as that text, and parses to its value.
    const data = new EncodedJson({ bytes: runs });
    expect(data.bytes).to.equal(runs);
    expect(data.text).to.equal(text);
    expect(data.pieces.join('')).to.equal(text);
    expect((data.toJSON() as { batch_input: unknown[] }).batch_input[99_999]).to.deep.equal({ plaintext: identifiedHmac(SALT, 'p99999'), 'clé €': identifiedHmac(SALT, 'ü') });
  });

  it('hashes a small body at once, without a promise or a turn', () => {
    const out = hashToJsonRuns({ plaintext: 'aGk=', n: 3 }, new AuditHmac(SALT));
    expect(out).not.to.be.instanceOf(Promise);
    expect((out as string[]).join('')).to.equal(JSON.stringify({ plaintext: identifiedHmac(SALT, 'aGk='), n: 3 }));
  });

  it('writes what JSON.stringify writes for the hashed copy: dates, bytes, bigints, what JSON leaves out, unhashed keys, escapes', () => {
    const when = new Date('2024-05-01T00:00:00.000Z');
    const value = {
      z: 1,
      '2': 'numeric keys come first',
      when,
      bytes: Buffer.from('hi'),
      big: 12345678901234567890n,
      gone: undefined,
      fn: () => 1,
      list: [undefined, () => 1, NaN, -0, 1e21, null, true, { context: ['raw "quoted"\n\u2028'] }],
      context: 'kept ünï',
      empty: {},
      none: [],
      odd: { toJSON: () => undefined },
    };
    const h = (v: string) => identifiedHmac(SALT, v);
    const copy = {
      z: 1,
      '2': h('numeric keys come first'),
      when: h(when.toISOString()),
      bytes: h('aGk='),
      big: '12345678901234567890',
      list: [null, null, null, 0, 1e21, null, true, { context: ['raw "quoted"\n\u2028'] }],
      context: 'kept ünï',
      empty: {},
      none: [],
    };
    expect(hashToJson(value, new AuditHmac(SALT), ['context'])).to.equal(JSON.stringify(copy));
    // Bytes as base64, where JSON.stringify would write a Buffer's toJSON.
    expect(hashToJson(value, undefined)).to.equal(JSON.stringify({ ...value, bytes: 'aGk=' }, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  });

  it('feeds a string of megabytes to its HMAC in pieces, never cutting a surrogate pair', async () => {
    // A pair straddles every piece boundary a naive cut would make.
    const text = `${'a'.repeat(256 * 1024 - 1)}\u{1F511}`.repeat(12);
    const { result, turns } = await turnsDuring(() => hashedInSlices({ plaintext: text }, new AuditHmac(SALT)));
    expect(turns).to.be.at.least(1);
    expect((JSON.parse(result!) as { plaintext: string }).plaintext).to.equal(`hmac-sha256:${createHmac('sha256', SALT).update(text, 'utf8').digest('hex')}`);
  });

  it('writes a value nested 100,000 levels deep without overflowing the stack', async () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const out = await hashedInSlices(deep, new AuditHmac(SALT));
    expect(out).to.equal(`${'['.repeat(100_000)}"${identifiedHmac(SALT, 'leaf')}"${']'.repeat(100_000)}`);
  });

  it('gives the same hashes through the WASM batch kernel as through node:crypto', async () => {
    const wasm = await WasmCrypto.load();
    const ascii = Array.from({ length: 40 }, (_, i) => `v${i}`.repeat(i));
    const values = ['', 'x', 'ünïcødé \u{1F511}', 'y'.repeat(5000), ...ascii];
    const hmac = new AuditHmac(SALT, wasm);
    /** Each value's hash from the hex digests made back to back. */
    const many = (from: AuditHmac, list: readonly string[]) => {
      const hex = from.hexDigests(list);
      return list.map((_, i) => HMAC_PREFIX + hex.slice(i * 64, (i + 1) * 64));
    };
    // Through the kernel: ASCII only (encoded in one go), and mixed; a few values one by one.
    for (const list of [ascii, values, values.slice(0, 4)]) expect(many(hmac, list)).to.deep.equal(list.map((v) => identifiedHmac(SALT, v)));
    expect(hmac.one('ünï')).to.equal(identifiedHmac(SALT, 'ünï'));
    // One request's HMAC, which hashes a value seen again once, gives the same hashes.
    const request = hmac.remembering();
    expect([request.one('t'), request.one('t'), request.one('u')]).to.deep.equal(['t', 't', 'u'].map((v) => identifiedHmac(SALT, v)));
    expect(many(request, ascii)).to.deep.equal(ascii.map((v) => identifiedHmac(SALT, v)));
  });

  it('reads a JsonText (a batch\'s results) from its text without making its plain value, writing what the walk of that value writes', () => {
    const hmac = new AuditHmac(SALT);
    const texts = [
      '[{"ciphertext":"vault:v1:abc","key_version":1,"reference":""},{"ciphertext":"vault:v1:de\\"f","key_version":2,"reference":"r-2"}]',
      '{ "a" : [ "x", 1.50, 1e2, -0, true, null, {"b\\u0041": "\\u00e9\\n\\/"} ], "c": {} ,\n "d": [ ], "e": [[["deep"]]] }',
      '[1e400, 12345678901234567891, 0.1, -2.5e-3]',
      '"a string alone"',
      '7',
    ];
    for (const text of texts) {
      for (const [device, exempt] of [[hmac, []], [hmac, ['a', 'key_version', 'e']], [undefined, []]] as const) {
        let made = 0;
        const data = { results: new JsonText(text, () => (made++, JSON.parse(text))) };
        expect(hashToJson(data, device, exempt), text).to.equal(hashToJson({ results: JSON.parse(text) }, device, exempt));
        expect(made, text).to.equal(0);
      }
    }
  });

  it('reads a JsonText in pieces as its whole text, and walks its plain value when a cut falls inside a string, a number or a literal', () => {
    const hmac = new AuditHmac(SALT);
    const text = '[{"ciphertext":"vault:v1:abc","key_version":12,"ok":true},{"ciphertext":"vault:v1:def","key_version":345,"ok":false}]';
    const whole = hashToJson({ results: JSON.parse(text) }, hmac);
    const between = text.indexOf(',{');
    for (const cut of [between, between + 1, text.indexOf('abc') + 1, text.indexOf('345') + 1, text.indexOf('true') + 2, text.indexOf('12') + 1]) {
      let made = 0;
      const data = { results: new JsonText([text.slice(0, cut), text.slice(cut)], () => (made++, JSON.parse(text))) };
      expect(hashToJson(data, hmac), `cut at ${cut}`).to.equal(whole);
      // Cut between two entries, the pieces are read as they are; anywhere else the plain value is walked.
      expect(made, `cut at ${cut}`).to.equal(cut === between || cut === between + 1 ? 0 : 1);
    }
  });

  it('walks a JsonText\'s plain value when its text would read otherwise: a key that is an array index, a key written twice', () => {
    const hmac = new AuditHmac(SALT);
    for (const text of ['{"b":"x","10":"y","a":["z"]}', '[{"a":"first","a":"second"}]']) {
      let made = 0;
      const data = { results: new JsonText(text, () => (made++, JSON.parse(text))) };
      expect(hashToJson(data, hmac), text).to.equal(hashToJson({ results: JSON.parse(text) }, hmac));
      expect(made, text).to.equal(1);
    }
  });

  it("walks a long JsonText's plain value when its text reads otherwise only near its end, after runs of its hashed strings were joined", async () => {
    const hmac = new AuditHmac(SALT);
    // Far more strings than the pass hashes and joins at a time, then a key written twice.
    const items = Array.from({ length: 20_000 }, (_, i) => `{"ciphertext":"vault:v1:c${i}","reference":"r${i}"}`);
    const text = `[${items.join(',')},{"a":"first","a":"second"}]`;
    const before = Array.from({ length: 9_000 }, (_, i) => `p${i}`);
    for (const inSlices of [false, true]) {
      let made = 0;
      const data = { before, results: new JsonText(text, () => (made++, JSON.parse(text))), after: 'z' };
      const out = inSlices ? await hashedInSlices(data, hmac) : hashToJson(data, hmac);
      expect(out).to.equal(JSON.stringify({ before: before.map((p) => identifiedHmac(SALT, p)), results: (JSON.parse(text) as Array<Record<string, string>>).map((item) => Object.fromEntries(Object.entries(item).map(([k, v]) => [k, identifiedHmac(SALT, v)]))), after: identifiedHmac(SALT, 'z') }));
      expect(made).to.equal(1);
    }
  });

  it('hashes a request body once per device for its request and response entries', async () => {
    const dir = await tempDir();
    let hashed = 0;
    const wasm = await WasmCrypto.load();
    const counting: HmacKernel = {
      hmacSha256Packed: (key, data, ends) => {
        hashed += ends.length;
        return wasm.hmacSha256Packed(key, data, ends);
      },
    };
    const broker = new AuditBroker(new MemoryStorage(), pino({ level: 'silent' }), undefined, { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true }, counting);
    try {
      await broker.enable('file', { type: 'file', options: { file_path: path.join(dir.path, 'a.log') } });
      const memo = new AuditMemo();
      const input = { request: { id: 'r', operation: 'update', path: 'x', data: { list: Array.from({ length: 5000 }, (_, i) => `s${i}`) } } };
      await broker.logRequest(input, memo);
      await broker.logResponse({ ...input, response: { data: { results: Array.from({ length: 20 }, (_, i) => `r${i}`) } } }, memo);
      // The 5,000 request strings once, and the response's 20.
      expect(hashed).to.equal(5020);
      const lines = (await readFile(path.join(dir.path, 'a.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines[1].request.data).to.deep.equal(lines[0].request.data);
    } finally {
      await broker.close();
      await dir.remove();
    }
  });

  it('audits a login of 250,000 strings without stalling: the event loop turns before its request entry is written', async () => {
    const dir = await tempDir();
    const server = await startUnsealedServer({ plugins: [greeterPlugin], audit: API_AUDIT });
    // Turns of the event loop, and how many had passed when each entry reached the device.
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    const atWrite: number[] = [];
    const write = FileAuditDevice.prototype.write;
    FileAuditDevice.prototype.write = function (this: FileAuditDevice, entry) {
      atWrite.push(turns);
      return write.call(this, entry);
    };
    try {
      await server.host.audit.enable('file', { type: 'file', options: { file_path: path.join(dir.path, 'audit.log') } });
      await server.client.post('sys/auth/greeter', { type: 'greeter' });
      const body = { user: 'ann', padding: Array.from({ length: 250_000 }, () => 'x') };
      atWrite.length = 0;
      setImmediate(tick);
      const result = await server.host.handle({ method: 'POST', path: 'auth/greeter/login', query: {}, body, headers: {}, remoteAddress: '127.0.0.1' });
      expect(result.status).to.equal(200);
      // Hashing the body in one go would write the request entry before the loop ever turned.
      expect(atWrite[0]).to.be.at.least(MANY_TURNS);
    } finally {
      counting = false;
      FileAuditDevice.prototype.write = write;
      await server.close();
      await dir.remove();
    }
  });

  it('writes the line of a 100,000-item batch from its hashed text\'s runs, never the 9 MB text joined and encoded in one go', async () => {
    const dir = await tempDir();
    const broker = new AuditBroker(new MemoryStorage(), pino({ level: 'silent' }), undefined, { ...DEFAULT_AUDIT_RULES, unsafeAllowApiAuditCreation: true });
    const entries: AuditEntry[] = [];
    // Whether anything read the hashed text whole (joining its runs).
    let joined = 0;
    // The getter is JsonText's; it is watched on EncodedJson's prototype, and the watch removed after.
    const text = Object.getOwnPropertyDescriptor(JsonText.prototype, 'text')!;
    Object.defineProperty(EncodedJson.prototype, 'text', {
      ...text,
      get(this: EncodedJson) {
        if (this.length > 1024 * 1024) joined++;
        return text.get!.call(this) as string;
      },
    });
    const write = FileAuditDevice.prototype.write;
    FileAuditDevice.prototype.write = function (this: FileAuditDevice, entry) {
      entries.push(entry);
      return write.call(this, entry);
    };
    try {
      await broker.enable('file', { type: 'file', options: { file_path: path.join(dir.path, 'a.log') } });
      const data = { batch_input: Array.from({ length: 100_000 }, (_, i) => ({ plaintext: `p${i}` })) };
      await broker.logRequest({ request: { id: 'r', operation: 'update', path: 'transit/encrypt/k', data } }, new AuditMemo());
      const parts = entryBytes(entries[0]!, '', '\n');
      expect(joined).to.equal(0);
      const line = Buffer.concat(parts).toString('utf8');
      expect(line).to.equal(await readFile(path.join(dir.path, 'a.log'), 'utf8'));
      expect(JSON.parse(line).request.data.batch_input[99_999].plaintext).to.match(/^hmac-sha256:/);
      // Made in one go, the text was one part of the line (and one string) of the whole 9 MB.
      expect(line.length).to.be.above(8_000_000);
      expect(Math.max(...parts.map((part) => part.length))).to.be.below(1024 * 1024);
    } finally {
      FileAuditDevice.prototype.write = write;
      delete (EncodedJson.prototype as { text?: string }).text;
      await broker.close();
      await dir.remove();
    }
  });
});
