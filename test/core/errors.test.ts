/**
 * The error catalogue: the status is read from the error, and docs/errors.md lists exactly the
 * codes the source makes, with their statuses (as fastify's test/internals/errors.test.js keeps its
 * docs in step with lib/errors.js).
 */
import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  BadRequestError,
  ConflictError,
  InternalError,
  KeywardenError,
  NotActiveError,
  SealedError,
  UnavailableError,
  UnsupportedMediaTypeError,
  UpstreamError,
  catalogue,
  createError,
  errorMessage,
  httpStatusOf,
  publicMessageOf,
} from '../../core/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = path.join(ROOT, 'dist');

interface Made {
  readonly name: string;
  readonly code: string;
  readonly status: number;
  readonly file: string;
}

/** Every `createError(name, code, status` call in the source, outside comments. */
async function madeInSource(): Promise<Made[]> {
  const made: Made[] = [];
  for (const dir of ['core', 'storage', 'plugins', 'sdk']) {
    const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true });
    for (const entry of entries) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
      const file = path.join(entry.parentPath, entry.name);
      for (const line of (await readFile(file, 'utf8')).split('\n')) {
        if (/^\s*(?:\*|\/\/)/.test(line)) continue;
        const m = /createError\('(\w+)', '(\w+)', (\d+)/.exec(line);
        if (m) made.push({ name: m[1]!, code: m[2]!, status: Number(m[3]), file: path.relative(ROOT, file) });
      }
    }
  }
  return made;
}

/** The rows of docs/errors.md's tables: code, status, class. */
async function documented(): Promise<{ code: string; status: number; name: string }[]> {
  const text = await readFile(path.join(ROOT, 'docs/errors.md'), 'utf8');
  return [...text.matchAll(/^\| `(KW_\w+)` \| (\d+) \| `(\w+)` \|/gm)].map((m) => ({ code: m[1]!, status: Number(m[2]), name: m[3]! }));
}

describe('the error catalogue', () => {
  describe('docs/errors.md', () => {
    it('lists every code the source makes, with its class and status, and no other', async () => {
      const source = (await madeInSource()).map(({ code, status, name }) => ({ code, status, name }));
      expect(source.length).to.be.greaterThan(20);
      const byCode = (a: { code: string }, b: { code: string }) => a.code.localeCompare(b.code);
      expect((await documented()).sort(byCode)).to.deep.equal(source.sort(byCode));
    });

    it('never gives two kinds one code', async () => {
      const codes = (await madeInSource()).map((m) => m.code);
      expect(new Set(codes).size).to.equal(codes.length);
    });

    it('matches what the loaded catalogue says of each code', async () => {
      const source = await madeInSource();
      for (const file of new Set(source.map((m) => m.file))) await import(pathToFileURL(path.join(DIST, file.replace(/\.ts$/, '.js'))).href);
      const loaded = catalogue();
      for (const { code, status, name } of source) {
        const cls = loaded.get(code);
        expect(cls, code).not.to.equal(undefined);
        expect({ code: cls!.code, status: cls!.status, name: cls!.name }, code).to.deep.equal({ code, status, name });
      }
    });
  });

  describe('httpStatusOf', () => {
    it('reads the status the error carries, for a kind made anywhere', () => {
      const Teapot = createError('TeapotError', 'KW_TEST_TEAPOT', 418);
      expect(httpStatusOf(new Teapot('short and stout'))).to.equal(418);
      expect(httpStatusOf(new BadRequestError('x'))).to.equal(400);
      expect(httpStatusOf(new UnsupportedMediaTypeError('x'))).to.equal(415);
      expect(httpStatusOf(new SealedError())).to.equal(503);
    });

    it('answers a refined kind with its own status and keeps instanceof its parent', () => {
      const Quota = createError('QuotaError', 'KW_TEST_QUOTA', 429, { parent: ConflictError });
      const err = new Quota('too many');
      expect(err).to.be.instanceOf(ConflictError).and.instanceOf(KeywardenError);
      expect(err.name).to.equal('QuotaError');
      expect(err.code).to.equal('KW_TEST_QUOTA');
      expect(httpStatusOf(err)).to.equal(429);
      expect(new NotActiveError()).to.be.instanceOf(UnavailableError);
    });

    it('makes anything outside the catalogue a 500', () => {
      class Stray extends KeywardenError {}
      expect(httpStatusOf(new Error('plain'))).to.equal(500);
      expect(httpStatusOf('a string')).to.equal(500);
      expect(httpStatusOf(new Stray('stray'))).to.equal(500);
    });
  });

  describe('publicMessageOf', () => {
    it('shows a 4xx message and the message of a 5xx about the server state', () => {
      expect(publicMessageOf(new BadRequestError('field "x" is bad'))).to.equal('field "x" is bad');
      expect(publicMessageOf(new SealedError())).to.equal('Vault is sealed: unseal Keywarden with "keywarden operator unseal" and a threshold of key shares');
      expect(publicMessageOf(new UnavailableError('the store is down'))).to.equal('the store is down');
      expect(publicMessageOf(new UpstreamError('the provider timed out'))).to.equal('the provider timed out');
    });

    it('hides every other 5xx behind "internal error"', () => {
      expect(publicMessageOf(new InternalError('the key ring is 3 bytes'))).to.equal('internal error');
      expect(publicMessageOf(new TypeError('x is undefined'))).to.equal('internal error');
      expect(publicMessageOf('thrown text')).to.equal('internal error');
    });
  });

  describe('createError', () => {
    it('refuses a malformed or taken code and a status that is not an error', () => {
      expect(() => createError('X', 'lower', 400)).to.throw(/must be KW_/);
      expect(() => createError('X', 'KW_BAD_REQUEST', 400)).to.throw(/already in the catalogue/);
      expect(() => createError('X', 'KW_TEST_OK', 200)).to.throw(/not an HTTP error status/);
    });

    it('uses the default message when none is given, and keeps a cause', () => {
      const cause = new Error('root cause');
      const Gone = createError('GoneError', 'KW_TEST_GONE', 410, { message: 'it is gone' });
      expect(new Gone().message).to.equal('it is gone');
      expect(new Gone('elsewhere', { cause }).cause).to.equal(cause);
    });
  });

  it('errorMessage describes any thrown value', () => {
    expect(errorMessage(new Error('boom'))).to.equal('boom');
    expect(errorMessage('text')).to.equal('text');
    expect(errorMessage(42)).to.equal('42');
    expect(errorMessage(undefined)).to.equal('undefined');
  });
});
