/**
 * A large request's memory goes back when its answer has gone out, not at a later garbage
 * collection (core/buffer-release.ts): the body's bytes, which a large string of it is read from in
 * place, and the pieces of an answer's text built for it. A handler the deadline abandoned keeps its
 * body, since it may still read it. The client gets every answer whole.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { FrameworkBackend, definePath, type PluginManifest } from '../../../sdk/index.js';
import { AsciiText, AsciiTextBuilder } from '../../../sdk/crypto.js';
import { startUnsealedServer } from '../../helpers/server.js';

const DEADLINE_MS = 3000;

/** The bytes a text still holds: its length while its memory is there, 0 once given back. */
function heldBytes(text: string | AsciiText | undefined): number {
  if (text === undefined) return -1;
  return typeof text === 'string' ? text.length : text.byteRuns().reduce((total, run) => total + run.length, 0);
}

/** A plugin that keeps the large texts it was given and answered, and says how much of them is left. */
function keepingPlugin() {
  let given: string | AsciiText | undefined;
  let answered: AsciiText | undefined;
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  let reportLate!: (bytes: number) => void;
  const lateRead = new Promise<number>((resolve) => (reportLate = resolve));
  const keep = definePath({
    pattern: 'keep',
    fields: {
      text: { type: 'large-string', description: 'A text of megabytes.', required: true },
      wait: { type: 'bool', description: 'Whether to wait for the test past the deadline, then read the text.' },
    },
    operations: {
      update: {
        summary: 'Keeps the text.',
        handler: async (_req, input) => {
          given = input.text;
          if (input.wait) {
            await gate;
            reportLate(heldBytes(input.text));
          }
          return { data: { bytes: heldBytes(input.text) } };
        },
      },
    },
    synopsis: 'Keeps a text.',
    description: 'Keeps the text it is given.',
  });
  const answer = definePath({
    pattern: 'answer',
    fields: { bytes: { type: 'int', description: 'Random bytes to answer, as base64.', required: true } },
    operations: {
      update: {
        summary: 'Answers a built text.',
        handler: async (_req, input) => {
          const bytes = randomBytes(input.bytes);
          answered = new AsciiTextBuilder().base64(bytes).build();
          return { data: { text: answered, expected: bytes.toString('base64').slice(-64) } };
        },
      },
    },
    synopsis: 'Answers a text.',
    description: 'Answers a text built for the answer.',
  });
  const held = definePath({
    pattern: 'held',
    fields: {},
    operations: { read: { summary: 'What is left.', handler: async () => ({ data: { given: heldBytes(given), answered: heldBytes(answered) } }) } },
    synopsis: 'What is left.',
    description: 'The bytes the kept texts still hold.',
  });
  const manifest: PluginManifest = {
    name: 'keeping',
    kind: 'secret',
    version: '1.0.0',
    description: 'Keeps large texts (test plugin).',
    factory: () => new FrameworkBackend({ description: 'Keeps large texts (test plugin).', paths: [keep, answer, held] }),
  };
  return { manifest, letGo, lateRead };
}

describe('large request memory given back once answered', function () {
  this.timeout(60_000);
  const plugin = keepingPlugin();
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  const text = randomBytes(3 * 1024 * 1024).toString('base64');

  before(async () => {
    server = await startUnsealedServer({ plugins: [plugin.manifest], maxRequestDurationMs: DEADLINE_MS, jsonLimits: { stringLength: 8 * 1024 * 1024 } });
    expect((await server.client.post('sys/mounts/keeping', { type: 'keeping' })).status).to.equal(204);
  });

  after(async () => {
    plugin.letGo();
    await server?.close();
  });

  it("gives back the body's bytes once the answer is out, after the handler read them whole", async () => {
    const answer = await server.client.post('keeping/keep', { text });
    expect(answer.status).to.equal(200);
    expect(answer.body.data.bytes).to.equal(text.length);
    // The handler was given the text in place, as its body's bytes: they are gone now.
    expect((await server.client.get('keeping/held')).body.data.given).to.equal(0);
  });

  it('gives back the pieces of a text built for an answer once the client has it whole', async () => {
    const answer = await server.client.post('keeping/answer', { bytes: 6 * 1024 * 1024 });
    expect(answer.status).to.equal(200);
    expect(answer.body.data.text).to.have.length(8 * 1024 * 1024);
    expect(answer.body.data.text.slice(-64)).to.equal(answer.body.data.expected);
    expect((await server.client.get('keeping/held')).body.data.answered).to.equal(0);
  });

  it('leaves the body to a handler the deadline abandoned, which reads it whole after the 504', async () => {
    const answer = await server.client.post('keeping/keep', { text, wait: true });
    expect(answer.status).to.equal(504);
    plugin.letGo();
    expect(await plugin.lateRead).to.equal(text.length);
  });
});
