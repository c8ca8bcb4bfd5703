/** hmac, sign, verify, hash and random paths (filled in by their own files). */
import type { AnyPathDefinition } from '../../../core/framework/index.js';
import type { TransitContext } from '../context.js';

export function signingPaths(_ctx: TransitContext): AnyPathDefinition[] {
  return [];
}
