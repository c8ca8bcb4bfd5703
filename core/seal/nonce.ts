import { timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../errors.js';

/**
 * Checks an operation's nonce in constant time: for the unauthenticated endpoints the nonce is what
 * keeps other callers out of the attempt.
 */
export function requireNonce(expected: string, given: string): void {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw new BadRequestError('incorrect nonce supplied');
}
