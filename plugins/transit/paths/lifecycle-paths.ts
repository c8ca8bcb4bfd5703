/** export, byok-export, backup, restore, wrapping_key, import, import_version, derive-key, csr and set-certificate paths. */
import type { AnyPathDefinition } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { backupPath } from './backup.js';
import { byokExportPath } from './byok-export.js';
import { csrPath } from './csr.js';
import { deriveKeyPath } from './derive-key.js';
import { exportPath } from './export.js';
import { importPaths } from './import.js';
import { restorePath } from './restore.js';
import { setCertificatePath } from './set-certificate.js';
import { wrappingKeyPath } from './wrapping-key.js';

export function lifecyclePaths(ctx: TransitContext): AnyPathDefinition[] {
  return [
    exportPath(ctx),
    byokExportPath(ctx),
    backupPath(ctx),
    restorePath(ctx),
    wrappingKeyPath(ctx),
    ...importPaths(ctx),
    deriveKeyPath(ctx),
    csrPath(ctx),
    setCertificatePath(ctx),
  ];
}
