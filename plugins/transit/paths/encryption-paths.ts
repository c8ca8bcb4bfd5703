/** encrypt, decrypt, rewrap and datakey paths (filled in by their own files). */
import type { AnyPathDefinition } from '../../../core/framework/index.js';
import type { TransitContext } from '../context.js';

export function encryptionPaths(_ctx: TransitContext): AnyPathDefinition[] {
  return [];
}
