/**
 * Seal migration from Shamir shares to an auto seal, as Vault does it
 * (https://developer.hashicorp.com/vault/docs/concepts/seal#seal-migration): the operator adds the
 * seal stanza, restarts, and unseals with the old shares and `migrate` (`keywarden operator unseal
 * -migrate`); at the threshold the root key is opened with the unseal key, wrapped by the seal, and
 * stored with the seal's configuration in one batch, so a crash leaves either the shares or the
 * seal working. From then on every node with the stanza unseals itself, and the shares open
 * nothing. From one auto seal to another the seals themselves move the store (seal-set.ts).
 */
import { BadRequestError } from '../errors.js';
import type { Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import type { AutoSeal } from './auto-seal.js';
import { encodeWrapped } from './auto-unseal.js';
import type { AutoSealConfig, SealConfig } from './seal-keys.js';

/**
 * The auto seal a share's unseal migrates to, or undefined for a plain unseal.
 * @throws BadRequestError when a migration is pending and `migrate` was not asked for, or asked
 * for with none pending (as Vault refuses both).
 */
export function pendingMigration(config: SealConfig, seal: AutoSeal | undefined, migrate: boolean): AutoSeal | undefined {
  const pending = config.type === 'shamir' && seal !== undefined;
  if (pending && !migrate) {
    throw new BadRequestError(
      `a seal migration is pending: the configuration has seal "${seal.type}" and the store is sealed with Shamir shares; unseal with the shares and migrate=true (keywarden operator unseal -migrate), or remove the seal stanza`,
    );
  }
  if (!pending && migrate) throw new BadRequestError('migrate: no seal migration is pending (the configuration has no seal stanza for this Shamir store)');
  return pending ? seal : undefined;
}

/**
 * Wraps the (already verified) root key with `seal`, checks the wrapping opens, and stores it with
 * the auto seal's configuration together. Returns that configuration.
 * @throws UnavailableError when the seal cannot be reached: nothing is stored then.
 */
export async function migrateToAutoSeal(
  seal: AutoSeal,
  rootKey: Buffer,
  store: { readonly physical: Storage; readonly wrappedKeyPath: string; readonly sealConfigPath: string },
): Promise<AutoSealConfig> {
  const aad = Buffer.from(store.wrappedKeyPath, 'utf8');
  const wrapped = await seal.wrap(rootKey, aad);
  zeroize(await seal.unwrap(wrapped, aad));
  const config: AutoSealConfig = { type: seal.type, secret_shares: 1, secret_threshold: 1, stored_shares: 1 };
  await store.physical.batch([
    { type: 'put', key: store.wrappedKeyPath, value: encodeWrapped(wrapped) },
    { type: 'put', key: store.sealConfigPath, value: Buffer.from(JSON.stringify(config), 'utf8') },
  ]);
  return config;
}
