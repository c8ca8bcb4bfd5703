/** `hash(/:algorithm)`: the hash tool (core/tools/hash.ts), digesting through the WASM core. */
import { hashToolPath } from '../../../sdk/crypto.js';
import type { TransitContext } from '../context.js';

export function hashPath(ctx: TransitContext) {
  return hashToolPath('hash', (algorithm, data) => ctx.wasm.hash(algorithm, data));
}
