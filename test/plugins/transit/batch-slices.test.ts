/**
 * A batch goes from its items to its answer slice by slice (plugins/transit/crypto/batch-answer.ts,
 * answerInSlices): each slice is read, worked on and written into the answer before the next slice
 * is read, so a batch of 100,000 never holds all of its parsed items and results at once. The
 * answer is the one a batch worked on in one go gets, its results' text in ordinary-sized pieces.
 */
import { expect } from 'chai';
import { answerInSlices, BatchAnswer, batchAnswer, CIPHERTEXT_FIELDS } from '../../../plugins/transit/crypto/batch-answer.js';
import { ItemError } from '../../../plugins/transit/crypto/item-error.js';
import { SLICE_US } from '../../../plugins/transit/crypto/slices.js';
import { JsonText } from '../../../core/framework/json-text.js';
import type { LargeEncrypted } from '../../../plugins/transit/crypto/cipher.js';
import type { BatchItem } from '../../../plugins/transit/crypto/items.js';

/** A cost that makes slices of `size` items. */
const slicesOf = (size: number) => ({ itemUs: SLICE_US / size, unitUs: 0, sizeOf: () => 0 });

/** Items, some malformed (no plaintext), some with a reference of their own. */
function items(count: number): BatchItem[] {
  return Array.from({ length: count }, (_, i) => (i % 7 === 3 ? { reference: `r${i}` } : { plaintext: `p${i}`, ...(i % 5 === 0 ? { reference: i } : {}) }));
}

const parse = (slice: readonly BatchItem[]) => slice.map((item) => (typeof item.plaintext === 'string' ? { text: item.plaintext } : new ItemError('missing plaintext to encrypt')));
const seal = (requests: { text: string; index: number }[]): (LargeEncrypted | ItemError)[] =>
  requests.map(({ text, index }) => (index % 11 === 5 ? new ItemError(`cannot seal ${text}`) : { ciphertext: `vault:v1:${text}`, keyVersion: 1 }));

/** Every item read and sealed, in one go. */
const sealedWhole = (raw: readonly BatchItem[]) => parse(raw).map((item, index) => (item instanceof ItemError ? item : seal([{ ...item, index }])[0]!));

function textOf(response: { data?: Record<string, unknown> }): JsonText {
  return response.data!.batch_results as JsonText;
}

describe('a batch from its items to its answer', () => {
  it('writes each slice into the answer before the next slice is read', async () => {
    const raw = items(95);
    const events: string[] = [];
    const answer = new BatchAnswer<LargeEncrypted>(raw, 'req', CIPHERTEXT_FIELDS, {});
    const add = answer.add.bind(answer);
    answer.add = (results, offset) => {
      events.push(`answer ${offset}+${results.length}`);
      add(results, offset);
    };
    const failures = await answerInSlices(
      raw,
      slicesOf(20),
      (slice) => {
        events.push(`read ${slice.length}`);
        return parse(slice);
      },
      (item, index) => ({ ...item, index }),
      seal,
      answer,
    );
    expect(events).to.deep.equal(['read 20', 'answer 0+20', 'read 20', 'answer 20+20', 'read 20', 'answer 40+20', 'read 20', 'answer 60+20', 'read 15', 'answer 80+15']);
    // Malformed items (every 7th from 3) and items the cipher refused (every 11th from 5) are the failures.
    const failed = raw.map((_, i) => i).filter((i) => i % 7 === 3 || i % 11 === 5);
    expect(failures.map((f) => f.message)).to.deep.equal(failed.map((i) => (i % 7 === 3 ? 'missing plaintext to encrypt' : `cannot seal p${i}`)));
  });

  it('answers as a batch worked on in one go, its status, references and errors included', async () => {
    const raw = items(3000);
    const answer = new BatchAnswer<LargeEncrypted>(raw, 'req', CIPHERTEXT_FIELDS, {});
    await answerInSlices(raw, slicesOf(256), parse, (item, index) => ({ ...item, index }), seal, answer);
    const sliced = answer.response(['w'], 207);

    // The same results made whole first, then answered.
    const whole = await batchAnswer(raw, sealedWhole(raw), 'req', CIPHERTEXT_FIELDS, {}, ['w'], 207);

    expect(sliced.status).to.equal(207).and.equal(whole.status);
    expect(sliced.warnings).to.deep.equal(whole.warnings);
    const text = textOf(sliced);
    expect(text.text).to.equal(textOf(whole).text);
    const plain = JSON.parse(text.text) as Record<string, unknown>[];
    expect(plain).to.have.length(3000);
    expect(plain[0]).to.deep.equal({ ciphertext: 'vault:v1:p0', key_version: 1, reference: '0' });
    expect(plain[1]).to.deep.equal({ ciphertext: 'vault:v1:p1', key_version: 1, reference: 'req' });
    expect(plain[3]).to.deep.equal({ error: 'missing plaintext to encrypt', reference: 'r3' });
    expect(plain[5]).to.deep.equal({ error: 'cannot seal p5', reference: '5' });
    // Response wrapping and a plugin's wire read the plain value: the text, parsed.
    expect(text.toJSON()).to.deep.equal(plain);
  });

  it('keeps the results text in pieces under the large-object size, each ending with an entry', async () => {
    const raw = Array.from({ length: 20_000 }, (_, i) => ({ plaintext: `${'A'.repeat(88)}${i}` }));
    const response = await batchAnswer(raw, sealedWhole(raw), undefined, CIPHERTEXT_FIELDS, {}, [], undefined);
    const pieces = textOf(response).pieces;
    expect(pieces.length).to.be.greaterThan(10);
    for (const piece of pieces.slice(0, -1)) {
      // Under V8's 128 KiB large-object size (one-byte text: a character a byte).
      expect(piece.length).to.be.below(128 * 1024);
      expect(piece.endsWith('}')).to.equal(true);
    }
    expect(pieces.join('')).to.equal(textOf(response).text);
    expect(JSON.parse(textOf(response).text)).to.have.length(20_000);
  });
});
