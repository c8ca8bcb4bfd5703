import { expect } from 'chai';
import { GroupCommit } from '../../../core/audit/group-commit.js';
import { caught } from './helpers.js';

/** A sink whose writes the test finishes by hand, recording what each write carried. */
function heldSink(lineByLine = false) {
  const writes: Array<{ text: string; lines: number; finish: (err?: Error | (Error | undefined)[]) => void }> = [];
  const flush = (lines: readonly Buffer[]) =>
    new Promise<void | (Error | undefined)[]>((resolve, reject) =>
      writes.push({
        text: Buffer.concat(lines).toString('utf8'),
        lines: lines.length,
        finish: (err) => (err instanceof Error ? reject(err) : resolve(err)),
      }),
    );
  const commits = new GroupCommit(flush, lineByLine);
  return { writes, commits, append: (line: string) => commits.append(Buffer.from(line, 'utf8')) };
}

/** Lets queued promise callbacks run (no timers: only the microtask and immediate queues). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('audit group commit', () => {
  it('writes the lines that arrive while a write is in flight together in the next write, in order', async () => {
    const { writes, append } = heldSink();
    const first = append('a\n');
    await settle();
    expect(writes.map((w) => w.text)).to.deep.equal(['a\n']);
    const later = ['b\n', 'c\n', 'd\n'].map(append);
    await settle();
    expect(writes).to.have.length(1, 'nothing else is written while the first write is in flight');
    writes[0]!.finish();
    await first;
    await settle();
    expect(writes.map((w) => [w.text, w.lines])).to.deep.equal([['a\n', 1], ['b\nc\nd\n', 3]]);
    writes[1]!.finish();
    await Promise.all(later);
  });

  it('answers a line only once the write that carries it succeeded', async () => {
    const { writes, append } = heldSink();
    let done = false;
    const line = append('a\n').then(() => (done = true));
    await settle();
    expect(done).to.equal(false);
    writes[0]!.finish();
    await line;
    expect(done).to.equal(true);
  });

  it('fails every line of a failed write, and only those; later lines are written again', async () => {
    const { writes, append } = heldSink();
    const first = append('a\n');
    await settle();
    const batch = ['b\n', 'c\n', 'd\n'].map(append);
    writes[0]!.finish();
    await first;
    await settle();
    writes[1]!.finish(new Error('ENOSPC'));
    for (const failed of batch) expect((await caught(failed)).message).to.equal('ENOSPC');
    const after = append('e\n');
    await settle();
    expect(writes[2]!.text).to.equal('e\n');
    writes[2]!.finish();
    await after;
  });

  it('fails only the lines a sink that sends them one by one reports as failed', async () => {
    const { writes, append } = heldSink(true);
    const first = append('a\n');
    await settle();
    const batch = ['b\n', 'too big\n', 'd\n'].map(append);
    writes[0]!.finish();
    await first;
    await settle();
    writes[1]!.finish([undefined, new Error('EMSGSIZE'), undefined]);
    await batch[0];
    expect((await caught(batch[1]!)).message).to.equal('EMSGSIZE');
    await batch[2];
  });

  it('runs a control step after the lines appended before it and before those appended after it', async () => {
    const { writes, commits, append } = heldSink();
    const order: string[] = [];
    const before = append('before\n').then(() => order.push('before'));
    const step = commits.run(async () => void order.push('reopen'));
    const after = append('after\n').then(() => order.push('after'));
    await settle();
    writes[0]!.finish();
    await Promise.all([before, step]);
    await settle();
    expect(writes.map((w) => w.text)).to.deep.equal(['before\n', 'after\n'], 'a line appended after the step is not in the write before it');
    writes[1]!.finish();
    await after;
    expect(order).to.deep.equal(['before', 'reopen', 'after']);
  });

  it('starts a new write rather than grow one past its bound, keeping the order', async () => {
    const { writes, append } = heldSink();
    const big = 'x'.repeat(5 * 1024 * 1024) + '\n';
    const first = append('a\n');
    await settle();
    const rest = [big, big, 'z\n'].map(append);
    writes[0]!.finish();
    await first;
    await settle();
    expect(writes[1]!.lines).to.equal(1);
    writes[1]!.finish();
    await settle();
    expect(writes[2]!.lines).to.equal(2);
    expect(writes[2]!.text.endsWith('\nz\n')).to.equal(true);
    writes[2]!.finish();
    await Promise.all(rest);
  });
});
