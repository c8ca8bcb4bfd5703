/**
 * Strict standard base64 (with padding), as Go's decoder reads it: Node's Buffer.from(…, 'base64')
 * silently accepts URL-safe characters, missing padding and garbage, which would turn a client's
 * mistake into wrong data instead of a 400.
 */
import { BadRequestError } from '../../../core/errors.js';

/** Any character outside the standard alphabet; a negated class scans far faster than an anchored pattern. */
const INVALID = /[^A-Za-z0-9+/=]/;

/** Decodes `value` or throws BadRequestError naming `field`. Newlines are ignored, as in Go. */
export function decodeBase64(value: string, field: string): Buffer {
  const text = value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0 ? value.replace(/[\r\n]/g, '') : value;
  if (text.length % 4 === 0 && !INVALID.test(text)) {
    const pad = text.indexOf('=');
    if (pad < 0 || pad === text.length - 1 || (pad === text.length - 2 && text.charCodeAt(text.length - 1) === 61)) {
      return Buffer.from(text, 'base64');
    }
  }
  throw new BadRequestError(`unable to decode ${field} as base64: illegal base64 data at input byte ${firstBadIndex(text)}`);
}

/** Where Go's decoder would stop: the first bad character, a misplaced "=", or the short tail. */
function firstBadIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (!/[A-Za-z0-9+/=]/.test(c)) return i;
    if (c === '=' && i < text.length - 2) return i;
  }
  return text.length - (text.length % 4 || 4);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
