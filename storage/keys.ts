import { BadRequestError } from '../core/errors.js';
import type { BatchOp } from './storage.js';

/**
 * Key order and op checks shared by the physical backends, so every backend sorts, lists and
 * rejects exactly alike.
 */

/**
 * Orders keys by Unicode code point, which is the order of their UTF-8 bytes — the order LevelDB
 * (and PostgreSQL's `C` collation) uses. Plain `<` on JS strings compares UTF-16 code units and
 * would put U+10000.. before U+E000..U+FFFF, so `list` would differ between backends.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Lift surrogates (D800–DFFF) above E000–FFFF, where their code points (≥ 0x10000) belong.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * The first key after every key inside folder `folder/` (given without its slash): `'0'` is the
 * character after `'/'`, so `folder0` sorts after `folder/…` and before any sibling that follows.
 */
export function afterFolder(folder: string): string {
  return folder + '0';
}

/**
 * The smallest key greater than every key starting with `prefix`, or undefined when there is none
 * (empty prefix). Incrementing the last code point is exact in code-point (= UTF-8 byte) order.
 */
export function prefixEnd(prefix: string): string | undefined {
  const chars = Array.from(prefix);
  while (chars.length > 0) {
    const cp = chars.pop()!.codePointAt(0)!;
    if (cp < 0x10ffff) {
      // Skip the surrogate block: those are not code points and cannot appear in UTF-8.
      const next = cp + 1 === 0xd800 ? 0xe000 : cp + 1;
      return chars.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

/**
 * The checks every physical backend makes before writing, so a malformed op fails the same way
 * whichever store is underneath — and fails before any part of a batch is applied.
 */
export function validateOp(op: BatchOp): void {
  if (typeof op.key !== 'string' || op.key === '') {
    throw new BadRequestError('storage key must be a non-empty string');
  }
  if (op.type === 'put') {
    if (!(op.value instanceof Uint8Array)) {
      throw new BadRequestError(`storage value for "${op.key}" must be a Uint8Array`);
    }
  } else if (op.type !== 'delete') {
    throw new BadRequestError(`unknown storage operation "${String((op as { type: unknown }).type)}"`);
  }
}
