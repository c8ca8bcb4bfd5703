/**
 * Strict standard base64 (with padding), as Go's decoder reads it: Node's Buffer.from(…, 'base64')
 * silently accepts URL-safe characters, missing padding and garbage, which would turn a client's
 * mistake into wrong data instead of a 400.
 */
import { BadRequestError } from '../../../core/errors.js';

const STD = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes `value` or throws BadRequestError naming `field`. Newlines are ignored, as in Go. */
export function decodeBase64(value: string, field: string): Buffer {
  const text = value.replace(/[\r\n]/g, '');
  const bad = firstBadIndex(text);
  if (bad >= 0) throw new BadRequestError(`unable to decode ${field} as base64: illegal base64 data at input byte ${bad}`);
  return Buffer.from(text, 'base64');
}

function firstBadIndex(text: string): number {
  if (STD.test(text) && text.length % 4 === 0) {
    const pad = text.indexOf('=');
    if (pad < 0 || pad >= text.length - 2) return -1;
  }
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
