/** The encrypt, decrypt, rewrap and datakey paths. */
import type { AnyPathDefinition } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { datakeyPath } from './datakey.js';
import { decryptPath } from './decrypt.js';
import { encryptPath } from './encrypt.js';
import { rewrapPath } from './rewrap.js';

export function encryptionPaths(ctx: TransitContext): AnyPathDefinition[] {
  return [encryptPath(ctx), decryptPath(ctx), rewrapPath(ctx), datakeyPath(ctx)];
}
