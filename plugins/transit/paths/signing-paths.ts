/** hmac, cmac, sign, verify, hash and random paths. */
import type { AnyPathDefinition } from '../../../sdk/index.js';
import { randomToolPaths } from '../../../sdk/crypto.js';
import type { TransitContext } from '../context.js';
import { hashPath } from './hash.js';
import { cmacPath } from './cmac.js';
import { hmacPath } from './hmac.js';
import { signPath } from './sign.js';
import { verifyPath } from './verify.js';

export function signingPaths(ctx: TransitContext): AnyPathDefinition[] {
  return [hmacPath(ctx), cmacPath(ctx), signPath(ctx), verifyPath(ctx), hashPath(ctx), ...randomToolPaths('random')];
}
