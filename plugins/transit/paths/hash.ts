/** `hash(/:algorithm)`: the hash tool (core/tools/hash.ts), digesting through the WASM core. */
import { hashToolPath } from '../../../core/tools/hash.js';
import type { TransitContext } from '../context.js';

export function hashPath(ctx: TransitContext) {
  return hashToolPath('hash', (algorithm, data) => ctx.wasm.hash(algorithm, data));
}
