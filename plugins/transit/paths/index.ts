/** The operation paths (encrypt, decrypt, …), each group a factory over the transit context. */
import type { AnyPathDefinition } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { encryptionPaths } from './encryption-paths.js';
import { signingPaths } from './signing-paths.js';
import { lifecyclePaths } from './lifecycle-paths.js';

export const TRANSIT_OPERATION_PATHS: ReadonlyArray<(ctx: TransitContext) => AnyPathDefinition[]> = [encryptionPaths, signingPaths, lifecyclePaths];
