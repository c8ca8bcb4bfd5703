/**
 * The pki secrets engine (mount type `pki`): a root CA per mount that issues X.509 certificates
 * under roles, signs CSRs, revokes and publishes a CRL, with Vault's paths, fields and answers
 * (https://developer.hashicorp.com/vault/api-docs/secret/pki; docs/pki.md says what it refuses).
 * A role with `generate_lease` issues each certificate with a lease: revoking the lease, or its
 * expiry, revokes the certificate (`revokeSecret`).
 */
import { FrameworkBackend, KeyedLock, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { PKI_PLUGIN } from './manifest.js';
import type { PkiContext } from './context.js';
import { revokeCertificate } from './crl.js';
import { CERT_SECRET_TYPE } from './issue.js';
import { PkiStore } from './store.js';
import { caPaths } from './paths/ca.js';
import { certPaths } from './paths/cert.js';
import { configUrlsPath } from './paths/config-urls.js';
import { issuePath } from './paths/issue.js';
import { refusedPaths } from './paths/refused.js';
import { revokePath } from './paths/revoke.js';
import { rolePaths } from './paths/roles.js';
import { rootPaths } from './paths/root.js';
import { signPath } from './paths/sign.js';
import { tidyPath } from './paths/tidy.js';

export function createPkiBackend(plugin: PluginContext): FrameworkBackend {
  const ctx: PkiContext = { store: new PkiStore(plugin.storage), clock: plugin.clock, logger: plugin.logger, system: plugin.system, locks: new KeyedLock() };
  return new FrameworkBackend({
    description: 'The PKI secrets engine: a root CA that issues certificates under roles.',
    paths: [
      ...rootPaths(ctx),
      configUrlsPath(ctx),
      ...rolePaths(ctx),
      issuePath(ctx),
      signPath(ctx),
      ...certPaths(ctx),
      ...caPaths(ctx),
      revokePath(ctx),
      tidyPath(ctx),
      ...refusedPaths(),
    ],
    revokeSecret: async (_req, secret) => {
      if (secret.type !== CERT_SECRET_TYPE) return;
      const serial = secret.internalData.serial_number;
      if (typeof serial !== 'string') throw new Error('the lease holds no serial number');
      // A certificate tidied away meanwhile has nothing left to revoke, as in Vault.
      if (!(await ctx.store.cert(serial))) return;
      await revokeCertificate(ctx, serial);
    },
  });
}

export const pkiPlugin: PluginManifest = { ...PKI_PLUGIN, factory: createPkiBackend };
