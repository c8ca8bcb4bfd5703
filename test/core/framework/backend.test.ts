import { expect } from 'chai';
import fc from 'fast-check';
import { BadRequestError, NotFoundError, UnsupportedOperationError, httpStatusOf } from '../../../core/errors.js';
import { FrameworkBackend, type FrameworkBackendOptions } from '../../../core/framework/backend.js';
import { definePath, PathPattern, type AnyPathDefinition } from '../../../core/framework/path.js';
import type { LogicalRequest, LogicalResponse, Operation } from '../../../core/framework/request.js';
import type { FieldSpecs } from '../../../core/framework/fields.js';
import { MemoryStorage } from '../../../storage/memory.js';
import type { Storage } from '../../../storage/storage.js';

function request(path: string, operation: Operation, data: Record<string, unknown> = {}, storage: Storage = new MemoryStorage()): LogicalRequest {
  return {
    id: 'req-1',
    operation,
    path,
    data,
    storage,
    mount: { path: 'test/', type: 'test', accessor: 'test_0000', uuid: '00000000-0000-0000-0000-000000000000' },
    headers: {},
    connection: { remoteAddress: '127.0.0.1' },
  };
}

async function send(backend: FrameworkBackend, path: string, operation: Operation, data: Record<string, unknown> = {}, storage?: Storage) {
  const target = request(path, operation, data, storage);
  const prepared = await backend.prepare(target);
  return { operation: prepared.operation, pattern: prepared.pattern, response: await backend.execute({ ...target, operation: prepared.operation }, prepared) };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected a rejection');
}

/** A read-only path whose answer names the pattern and echoes the input. */
function echoPath(pattern: string, extra: FieldSpecs = {}): AnyPathDefinition {
  const fields: Record<string, { type: 'string'; description: string }> = {};
  for (const name of new PathPattern(pattern).params) fields[name] = { type: 'string', description: `the ${name} segment` };
  return definePath({
    pattern,
    fields: { ...fields, ...extra },
    operations: {
      read: { summary: 'Echo.', handler: async (_req, input) => ({ data: { pattern, input } }) },
      list: { summary: 'Echo a listing.', handler: async (_req, input) => ({ data: { pattern, input } }) },
    },
    synopsis: `Echo for ${pattern}.`,
    description: 'Answers with the pattern that matched.',
  });
}

const backendOf = (paths: AnyPathDefinition[], extra: Partial<FrameworkBackendOptions> = {}) =>
  new FrameworkBackend({ description: 'test backend', paths, ...extra });

describe('FrameworkBackend', () => {
  describe('routing', () => {
    const patterns = [
      'keys/',
      'keys/:name',
      'keys/:name/rotate',
      'keys/:name/config',
      'keys/trim',
      'export/:type/:name/:version?',
      'notes/:name+',
      'notes/:name+/meta',
      'raw/:path*',
      'raw/special',
    ];
    const expectations: [string, string, Record<string, string>][] = [
      ['keys/', 'keys/', {}],
      ['keys', 'keys/', {}],
      ['keys/k1', 'keys/:name', { name: 'k1' }],
      ['keys/trim', 'keys/trim', {}],
      ['keys/k1/rotate', 'keys/:name/rotate', { name: 'k1' }],
      ['keys/trim/rotate', 'keys/:name/rotate', { name: 'trim' }],
      ['keys/k1/config', 'keys/:name/config', { name: 'k1' }],
      ['export/hmac-key/k1', 'export/:type/:name/:version?', { type: 'hmac-key', name: 'k1' }],
      ['export/hmac-key/k1/2', 'export/:type/:name/:version?', { type: 'hmac-key', name: 'k1', version: '2' }],
      ['notes/a/b', 'notes/:name+', { name: 'a/b' }],
      ['notes/a/b/meta', 'notes/:name+/meta', { name: 'a/b' }],
      ['raw/special', 'raw/special', {}],
      ['raw/special/x', 'raw/:path*', { path: 'special/x' }],
      ['raw/a/b/c', 'raw/:path*', { path: 'a/b/c' }],
    ];

    async function routes(order: string[]) {
      const backend = backendOf(order.map((p) => echoPath(p)));
      const answers: unknown[] = [];
      for (const [path] of expectations) answers.push((await send(backend, path, 'read')).response);
      return answers;
    }

    it('sends each path to the most specific matching pattern', async () => {
      const answers = await routes(patterns);
      expectations.forEach(([path, pattern, input], i) => {
        expect(answers[i], path).to.deep.equal({ data: { pattern, input } });
      });
    });

    it('routes the same way whatever order the paths are declared in', async () => {
      const forward = await routes(patterns);
      expect(await routes([...patterns].reverse())).to.deep.equal(forward);
      expect(await routes([...patterns.slice(5), ...patterns.slice(0, 5)])).to.deep.equal(forward);
    });

    it('answers NotFoundError "unsupported path" (404) when no pattern matches', async () => {
      const err = await rejection(send(backendOf([echoPath('keys/:name')]), 'nothing/here', 'read'));
      expect(err).to.be.instanceOf(NotFoundError);
      expect(err.message).to.equal('unsupported path');
      expect(httpStatusOf(err)).to.equal(404);
    });

    it('answers 404 for a segment ending in "."', async () => {
      const err = await rejection(send(backendOf([echoPath('keys/:name')]), 'keys/k1.', 'read'));
      expect(err).to.be.instanceOf(NotFoundError);
    });

    describe('with random sets of patterns', () => {
      /** A pattern of 1–3 segments from a small vocabulary, so that patterns often overlap. */
      const pattern = fc
        .tuple(
          fc.array(fc.constantFrom('a', 'b', ':p', ':m+'), { minLength: 0, maxLength: 2 }),
          fc.constantFrom('a', 'b', ':p', ':m+', ':o?', ':r*'),
          fc.boolean(),
        )
        .map(([head, last, listing]) => {
          const segments = [...head, last].map((s, i) => (s.startsWith(':') ? `:${s[1]}${i}${s.slice(2)}` : s));
          return segments.join('/') + (listing ? '/' : '');
        });
      /** Every path of up to four segments over the same words, with and without a trailing slash. */
      const probes: string[] = [''];
      for (let frontier = [''], depth = 0; depth < 4; depth++) {
        frontier = frontier.flatMap((prefix) => ['a', 'b', 'c'].map((w) => (prefix === '' ? w : `${prefix}/${w}`)));
        probes.push(...frontier);
      }
      probes.push(...probes.map((p) => `${p}/`));
      const routeOf = (backend: FrameworkBackend, path: string): string => {
        try {
          return backend.help(path).help.split('\n')[0]!;
        } catch (err) {
          if (err instanceof NotFoundError) return '(none)';
          throw err;
        }
      };
      const build = (list: string[]): FrameworkBackend | Error => {
        try {
          return backendOf(list.map((p) => echoPath(p)));
        } catch (err) {
          return err as Error;
        }
      };

      it('either refuses the set in every order or routes every path the same in every order', () => {
        fc.assert(fc.property(fc.array(pattern, { minLength: 1, maxLength: 5 }).chain((list) =>
          fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }))),
        ([list, shuffled]) => {
          const a = build(list);
          const b = build(shuffled);
          expect(a instanceof Error, `${list.join(' | ')} vs ${shuffled.join(' | ')}`).to.equal(b instanceof Error);
          if (a instanceof Error || b instanceof Error) return;
          const compiled = list.map((p) => new PathPattern(p));
          for (const probe of probes.filter((path) => compiled.some((p) => p.match(path)))) {
            expect(routeOf(a, probe), probe).to.equal(routeOf(b, probe));
          }
        }), { numRuns: 150 });
      });

      it('never accepts a set in which one path matches two equally specific patterns', () => {
        fc.assert(fc.property(fc.array(pattern, { minLength: 2, maxLength: 4 }), (list) => {
          if (build(list) instanceof Error) return;
          const compiled = list.map((p) => new PathPattern(p));
          for (const probe of probes) {
            const matching = compiled.filter((p) => p.match(probe));
            const best = Math.max(...matching.map((p) => p.specificity));
            expect(matching.filter((p) => p.specificity === best).length, `${probe} in ${list.join(' | ')}`).to.be.at.most(1);
          }
        }), { numRuns: 200 });
      });

      it('names, when it refuses a set, a path that both patterns really match', () => {
        fc.assert(fc.property(fc.array(pattern, { minLength: 2, maxLength: 4 }), (list) => {
          const built = build(list);
          if (!(built instanceof Error)) return;
          const m = /^paths "([^"]+)" and "([^"]+)" are ambiguous \(both match "([^"]*)"\)$/.exec(built.message);
          expect(m, built.message).not.to.equal(null);
          const [, first, second, witness] = m!;
          const [pa, pb] = [new PathPattern(first!), new PathPattern(second!)];
          expect(pa.specificity).to.equal(pb.specificity);
          expect(pa.match(witness!), `${first} on "${witness}"`).not.to.equal(undefined);
          expect(pb.match(witness!), `${second} on "${witness}"`).not.to.equal(undefined);
        }), { numRuns: 200 });
      });
    });
  });

  describe('construction', () => {
    it('refuses two patterns that match the same paths equally well', () => {
      expect(() => backendOf([echoPath('items/:a'), echoPath('items/:b')])).to.throw(
        'paths "items/:a" and "items/:b" are ambiguous (both match "items/x")',
      );
    });

    it('refuses equally specific patterns that overlap on a path neither spells out', () => {
      // "a/b" matches both, and both weigh one literal and one parameter.
      expect(() => backendOf([echoPath(':x/b'), echoPath('a/:y')])).to.throw(/are ambiguous \(both match "a\/b"\)/);
    });

    it('refuses the same pattern declared twice', () => {
      expect(() => backendOf([echoPath('config'), echoPath('config')])).to.throw('are ambiguous');
    });

    it('accepts overlapping patterns of different specificity', () => {
      expect(() => backendOf([echoPath('keys/:name'), echoPath('keys/trim'), echoPath('keys/:rest*')])).not.to.throw();
    });

    it('refuses a path segment that has no field', () => {
      const path = definePath({
        pattern: 'keys/:name', fields: {}, operations: { read: { summary: 'r', handler: async () => null } }, synopsis: 's', description: 'd',
      });
      expect(() => backendOf([path])).to.throw('path "keys/:name": segment "name" has no field');
    });

    it('refuses a field without a description', () => {
      const path = definePath({
        pattern: 'config', fields: { size: { type: 'int', description: '' } }, operations: { read: { summary: 'r', handler: async () => null } }, synopsis: 's', description: 'd',
      });
      expect(() => backendOf([path])).to.throw('path "config": field "size" has no description');
    });

    it('refuses a path without operations', () => {
      const path = definePath({ pattern: 'config', fields: {}, operations: {}, synopsis: 's', description: 'd' });
      expect(() => backendOf([path])).to.throw('path "config": no operations');
    });
  });

  describe('operations', () => {
    const calls: string[] = [];
    const recorder = (name: string) => async (_req: LogicalRequest, input: unknown): Promise<LogicalResponse> => {
      calls.push(name);
      return { data: { handler: name, input } };
    };
    const item = definePath({
      pattern: 'items/:name',
      fields: {
        name: { type: 'string', description: 'Item name.' },
        size: { type: 'int', description: 'Item size.', default: 1 },
      },
      existenceCheck: async (req, input) => {
        calls.push(`exists(${input.name},${input.size})`);
        return (await req.storage.get(`items/${input.name}`)) !== undefined;
      },
      operations: {
        create: { summary: 'Create.', handler: recorder('create') },
        update: { summary: 'Update.', handler: recorder('update') },
        read: { summary: 'Read.', handler: recorder('read') },
      },
      synopsis: 'An item.',
      description: 'Created on first write.',
    });
    const plain = definePath({
      pattern: 'config',
      fields: { size: { type: 'int', description: 'Cache size.' } },
      operations: { update: { summary: 'Write.', handler: recorder('update') }, read: { summary: 'Read.', handler: recorder('read') } },
      synopsis: 'Config.',
      description: 'No existence check.',
    });
    const createOnly = definePath({
      pattern: 'tokens/:name',
      fields: { name: { type: 'string', description: 'Token name.' } },
      existenceCheck: async () => true,
      operations: { create: { summary: 'Create.', handler: recorder('create') } },
      synopsis: 'Create-only.',
      description: 'Has no update handler.',
    });
    const backend = backendOf([item, plain, createOnly]);

    beforeEach(() => {
      calls.length = 0;
    });

    it('turns a write into create when the existence check says the target is missing', async () => {
      const result = await send(backend, 'items/a', 'update', { size: '5' });
      expect(result.operation).to.equal('create');
      expect(result.response).to.deep.equal({ data: { handler: 'create', input: { name: 'a', size: 5 } } });
    });

    it('keeps a write as update when the existence check finds the target', async () => {
      const storage = new MemoryStorage();
      await storage.put('items/a', new Uint8Array([1]));
      const result = await send(backend, 'items/a', 'update', {}, storage);
      expect(result.operation).to.equal('update');
      expect(calls).to.deep.equal(['exists(a,1)', 'update']);
    });

    it('hands the existence check the coerced input, defaults applied', async () => {
      await send(backend, 'items/b', 'update', { size: '7' });
      expect(calls[0]).to.equal('exists(b,7)');
    });

    it('writes nothing into the request it prepares: the chosen operation is the prepared one', async () => {
      const req = Object.freeze(request('items/a', 'update'));
      const prepared = await backend.prepare(req);
      expect(req.operation).to.equal('update');
      expect(prepared.operation).to.equal('create');
    });

    it('prepares plain data that survives a structured clone, and executes from the clone', async () => {
      const req = request('items/a', 'update', { size: '7', extra: 1 });
      const prepared = structuredClone(await backend.prepare(req));
      expect(prepared).to.deep.equal({ pattern: 'items/:name', operation: 'create', sudo: false, anyToken: false, input: { name: 'a', size: 7 }, unknown: ['extra'] });
      const response = await backend.execute(Object.freeze({ ...req, operation: prepared.operation }), prepared);
      expect(response?.data).to.deep.equal({ handler: 'create', input: { name: 'a', size: 7 } });
      expect(response?.warnings).to.deep.equal(['Endpoint ignored these unrecognized parameters: [extra]']);
    });

    it('treats a write as update on a path without an existence check', async () => {
      const result = await send(backend, 'config', 'update', { size: 3 });
      expect(result.operation).to.equal('update');
      expect(calls).to.deep.equal(['update']);
    });

    it('runs no existence check for reads', async () => {
      await send(backend, 'items/a', 'read');
      expect(calls).to.deep.equal(['read']);
    });

    it('answers UnsupportedOperationError (405) for an operation the path lacks', async () => {
      const err = await rejection(send(backend, 'config', 'delete'));
      expect(err).to.be.instanceOf(UnsupportedOperationError);
      expect(err.message).to.equal('unsupported operation');
      expect(httpStatusOf(err)).to.equal(405);
    });

    it('answers 405 when the existence check picks an operation the path lacks', async () => {
      const err = await rejection(send(backend, 'tokens/t1', 'update'));
      expect(err).to.be.instanceOf(UnsupportedOperationError);
      expect(calls).to.deep.equal([]);
    });

    it('refuses bad input before the existence check or the handler runs', async () => {
      const err = await rejection(send(backend, 'items/a', 'update', { size: 'big' }));
      expect(err).to.be.instanceOf(BadRequestError);
      expect(err.message).to.equal('invalid value for field "size": expected an integer, got "big"');
      expect(calls).to.deep.equal([]);
    });

    it('lets a path segment win over a body field of the same name', async () => {
      const result = await send(backend, 'items/from-path', 'read', { name: 'from-body' });
      expect(result.response?.data?.input).to.deep.include({ name: 'from-path' });
    });

    it('reports the matched pattern and whether it needs sudo', async () => {
      const sudoPath = definePath({
        pattern: 'rotate', fields: {}, sudo: true, operations: { update: { summary: 'u', handler: async () => null } }, synopsis: 's', description: 'd',
      });
      const prepared = await backendOf([sudoPath, plain]).prepare(request('rotate', 'update'));
      expect({ pattern: prepared.pattern, sudo: prepared.sudo }).to.deep.equal({ pattern: 'rotate', sudo: true });
      expect((await backendOf([sudoPath, plain]).prepare(request('config', 'read'))).sudo).to.equal(false);
    });
  });

  describe('unrecognized parameters', () => {
    const quiet = definePath({
      pattern: 'quiet', fields: { known: { type: 'string', description: 'Known.' } },
      operations: { update: { summary: 'u', handler: async () => null } }, synopsis: 's', description: 'd',
    });
    const chatty = definePath({
      pattern: 'chatty', fields: {},
      operations: { read: { summary: 'r', handler: async () => ({ data: { a: 1 }, warnings: ['from the handler'] }) } }, synopsis: 's', description: 'd',
    });
    const shared: LogicalResponse = { data: { constant: true } };
    const constant = definePath({
      pattern: 'constant', fields: {},
      operations: { read: { summary: 'r', handler: async () => shared } }, synopsis: 's', description: 'd',
    });
    const backend = backendOf([quiet, chatty, constant]);

    it('turns an empty answer into one carrying Vault\'s warning, names sorted and space-separated', async () => {
      const { response } = await send(backend, 'quiet', 'update', { known: 'x', zeta: 1, alpha: 2 });
      expect(response).to.deep.equal({ warnings: ['Endpoint ignored these unrecognized parameters: [alpha zeta]'] });
    });

    it('adds the warning after the handler\'s own warnings and keeps the data', async () => {
      const { response } = await send(backend, 'chatty', 'read', { extra: true });
      expect(response).to.deep.equal({
        data: { a: 1 },
        warnings: ['from the handler', 'Endpoint ignored these unrecognized parameters: [extra]'],
      });
    });

    it('warns about an unknown parameter even when its value is null', async () => {
      const { response } = await send(backend, 'quiet', 'update', { other: null });
      expect(response?.warnings).to.deep.equal(['Endpoint ignored these unrecognized parameters: [other]']);
    });

    it('adds nothing when every parameter is known', async () => {
      expect((await send(backend, 'quiet', 'update', { known: 'x' })).response).to.equal(null);
    });

    it('does not change a response object the handler hands out again on later requests', async () => {
      await send(backend, 'constant', 'read', { extra: 1 });
      const { response } = await send(backend, 'constant', 'read', { extra: 2 });
      expect(response?.warnings).to.deep.equal(['Endpoint ignored these unrecognized parameters: [extra]']);
      expect(shared).to.deep.equal({ data: { constant: true } });
    });
  });

  describe('fields Vault defines that the path does not honour', () => {
    let ran = false;
    const partial = definePath({
      pattern: 'partial', fields: { known: { type: 'string', description: 'Known.' } },
      refusedFields: { nonce: 'Keywarden always draws its own nonce' },
      operations: { update: { summary: 'u', handler: async () => ((ran = true), null) } }, synopsis: 's', description: 'd',
    });
    const backend = backendOf([partial]);

    it('refuses a request that sets one, naming the field and why, before the handler runs', async () => {
      ran = false;
      const err = await rejection(send(backend, 'partial', 'update', { known: 'x', nonce: 'AAAA' }));
      expect(err).to.be.instanceOf(BadRequestError);
      expect(err.message).to.equal('field "nonce" is not supported here: Keywarden always draws its own nonce');
      expect(ran).to.equal(false);
    });

    it('still only warns about a field Vault does not define either', async () => {
      const { response } = await send(backend, 'partial', 'update', { other: 1 });
      expect(response?.warnings).to.deep.equal(['Endpoint ignored these unrecognized parameters: [other]']);
    });

    it('lets a zero value through without a warning: clients send one for every setting left alone', async () => {
      for (const zero of [null, '', false, 'false', 0, '0', [], {}]) {
        ran = false;
        const { response } = await send(backend, 'partial', 'update', { nonce: zero });
        expect(ran, JSON.stringify(zero)).to.equal(true);
        expect(response, JSON.stringify(zero)).to.equal(null);
      }
    });

    it('names a refused field even when a required one is missing', async () => {
      const strict = definePath({
        pattern: 'strict', fields: { name: { type: 'string', description: 'Required.', required: true } },
        refusedFields: { nonce: 'never honoured' },
        operations: { update: { summary: 'u', handler: async () => null } }, synopsis: 's', description: 'd',
      });
      const err = await rejection(send(backendOf([strict]), 'strict', 'update', { nonce: 'AAAA' }));
      expect(err.message).to.equal('field "nonce" is not supported here: never honoured');
    });

    it('refuses to build a path that both declares and refuses a field', () => {
      const both = definePath({
        pattern: 'both', fields: { nonce: { type: 'string', description: 'Declared.' } },
        refusedFields: { nonce: 'and refused' },
        operations: { update: { summary: 'u', handler: async () => null } }, synopsis: 's', description: 'd',
      });
      expect(() => backendOf([both])).to.throw('path "both": field "nonce" is both declared and refused');
    });

    it('lists refused fields with their reasons in the path\'s help', () => {
      const help = backend.help('partial').help;
      expect(help).to.contain('### Refused parameters');
      expect(help).to.contain('- `nonce`: Keywarden always draws its own nonce');
      expect(backend.describePaths()[0]!.refusedFields).to.deep.equal({ nonce: 'Keywarden always draws its own nonce' });
    });
  });

  describe('help', () => {
    const documented = definePath({
      pattern: 'keys/:name',
      fields: {
        name: { type: 'name', description: 'Name of the encryption key.' },
        type: { type: 'string', description: 'Kind of key to create.', default: 'aes256-gcm96', allowedValues: ['aes256-gcm96', 'chacha20-poly1305'] },
        exportable: { type: 'bool', description: 'Whether the key may be exported.', required: true },
        secret_seed: { type: 'string', description: 'A seed that must never be shown.', default: 'do-not-show', sensitive: true },
        old_alias: { type: 'string', description: 'A deprecated alias of type.', deprecated: true },
      },
      existenceCheck: async () => false,
      operations: {
        create: { summary: 'Create a key.', handler: async () => null },
        read: { summary: 'Read a key.', handler: async () => null },
      },
      synopsis: 'Manage named encryption keys.',
      description: 'Keys are created on first write.',
    });
    const open = definePath({
      pattern: 'open', fields: {}, unauthenticated: true, allowedWhileSealed: true,
      operations: { read: { summary: 'Open read.', handler: async () => null } }, synopsis: 'Open.', description: 'No token needed.',
    });
    const backend = backendOf([documented, open]);

    it('renders the synopsis, description, operations and every field description', () => {
      const { help } = backend.help('keys/k1');
      for (const text of [
        '## keys/:name', 'Manage named encryption keys.', 'Keys are created on first write.',
        '**create**: Create a key.', '**read**: Read a key.',
        'Name of the encryption key.', 'Kind of key to create.', 'Whether the key may be exported.', 'A seed that must never be shown.',
      ]) {
        expect(help).to.include(text);
      }
    });

    it('shows types, required and in-path markers, defaults and allowed values', () => {
      const { help } = backend.help('keys/k1');
      expect(help).to.include('- `name` (name, in path): Name of the encryption key.');
      expect(help).to.include('- `exportable` (bool, required): Whether the key may be exported.');
      expect(help).to.include('Default: `"aes256-gcm96"`. One of: `aes256-gcm96`, `chacha20-poly1305`.');
    });

    it('hides deprecated fields and the default of a sensitive field', () => {
      const { help } = backend.help('keys/k1');
      expect(help).not.to.include('old_alias');
      expect(help).not.to.include('do-not-show');
    });

    it('describes the path for OpenAPI under its placeholder path', () => {
      const { openapi } = backend.help('keys/k1');
      expect(openapi).to.have.nested.property('paths.keys/{name}.synopsis', 'Manage named encryption keys.');
    });

    it('answers NotFoundError for a path no pattern matches', () => {
      expect(() => backend.help('nope')).to.throw(NotFoundError, 'unsupported path');
    });

    it('describes every path, with create supported only where an existence check and a create handler exist', () => {
      const described = backend.describePaths();
      expect(described.map((p) => p.pattern)).to.deep.equal(['keys/:name', 'open']);
      expect(described.map((p) => p.createSupported)).to.deep.equal([true, false]);
      expect(described[0]!.fields.name).to.deep.equal({ type: 'name', description: 'Name of the encryption key.', required: false, inPath: true });
      expect(described[1]!.unauthenticated).to.equal(true);
    });

    it('knows which paths need no token and which are served while sealed', () => {
      expect([backend.isUnauthenticated('open'), backend.isUnauthenticated('keys/k1'), backend.isUnauthenticated('nope')]).to.deep.equal([true, false, false]);
      expect([backend.isAvailableSealed('open'), backend.isAvailableSealed('keys/k1')]).to.deep.equal([true, false]);
    });
  });

  describe('lifecycle hooks', () => {
    const path = echoPath('x');

    it('exposes only the hooks it was given', () => {
      const bare = backendOf([path]);
      expect([bare.initialize, bare.periodic, bare.cleanup, bare.renew]).to.deep.equal([undefined, undefined, undefined, undefined]);
    });

    it('runs the given hooks', async () => {
      const ran: string[] = [];
      const backend = backendOf([path], {
        initialize: async () => void ran.push('initialize'),
        periodic: async () => void ran.push('periodic'),
        cleanup: async () => void ran.push('cleanup'),
        renew: async (_req, auth) => {
          ran.push('renew');
          return { ...auth, ttl: 60 };
        },
      });
      await backend.initialize!();
      await backend.periodic!();
      await backend.cleanup!();
      expect(await backend.renew!(request('x', 'update'), { policies: ['p'] })).to.deep.equal({ policies: ['p'], ttl: 60 });
      expect(ran).to.deep.equal(['initialize', 'periodic', 'cleanup', 'renew']);
    });
  });
});
