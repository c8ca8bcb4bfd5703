/** export, byok-export, backup, restore, wrapping_key, import, import_version, csr and set-certificate paths. */
import type { AnyPathDefinition } from '../../../core/framework/index.js';
import type { TransitContext } from '../context.js';

export function lifecyclePaths(_ctx: TransitContext): AnyPathDefinition[] {
  return [];
}
