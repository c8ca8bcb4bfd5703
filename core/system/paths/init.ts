/** `sys/init`: whether the server is initialized, and initializing it. */
import { AlreadyInitializedError, BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { encryptShares, encryptTo, readKeys } from '../../seal/pgp.js';
import { validateShamirConfig } from '../../seal/shares.js';
import { validateRecoveryConfig } from '../../seal/recovery.js';
import { zeroize } from '../../../storage/aead.js';
import type { SystemDeps } from '../services.js';

export function initPath(services: SystemDeps) {
  return definePath({
    pattern: 'init',
    fields: {
      secret_shares: { type: 'int', description: 'Number of key shares to split the unseal key into.', minimum: 1, maximum: 255 },
      secret_threshold: { type: 'int', description: 'Number of key shares needed to unseal.', minimum: 1, maximum: 255 },
      pgp_keys: {
        type: 'comma-string-list',
        description: 'One OpenPGP public key per share (base64 of the binary key, at most 64 KiB): each share is returned encrypted to its key.',
      },
      root_token_pgp_key: { type: 'string', description: 'An OpenPGP public key (base64 of the binary key, at most 64 KiB): the root token is returned encrypted to it.' },
      stored_shares: { type: 'int', description: 'Accepted for compatibility: 0 with Shamir seals; 0 or 1 with an auto seal, which stores the one wrapped root key.' },
      recovery_shares: {
        type: 'int',
        description: 'With an auto seal: number of shares to split the recovery key into; 0 (the default) creates none until an authenticated sys/rekey-recovery-key/init. Not applicable to Shamir seals.',
        minimum: 0,
        maximum: 255,
      },
      recovery_threshold: {
        type: 'int',
        description: 'With an auto seal: number of recovery shares needed to authorize root generation and recovery rekey; 0 with no shares. Not applicable to Shamir seals.',
        minimum: 0,
        maximum: 255,
      },
      recovery_pgp_keys: {
        type: 'comma-string-list',
        description: 'With an auto seal: one OpenPGP public key per recovery share (base64 of the binary key, at most 64 KiB): each share is returned encrypted to its key. Not applicable to Shamir seals.',
      },
    },
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report whether the server is initialized.',
        handler: async () => ({ raw: { status: 200, body: { initialized: await services.seal.isInitialized() } } }),
      },
      update: {
        summary: 'Initialize the server: create the keys and the root token.',
        handler: async (_req, input) => {
          // Anyone can call this path, and reading keys is its costly part: the state, the counts and
          // every key's size (in readKeys) are checked before any key is parsed.
          if (await services.seal.isInitialized()) throw new AlreadyInitializedError();
          const autoSeal = services.seal.autoSealType;
          // As OpenBao: the other seal kind's parameters are refused, not ignored.
          const recoveryFlags = [
            ...(input.recovery_shares ? ['recovery_shares'] : []),
            ...(input.recovery_threshold ? ['recovery_threshold'] : []),
            ...((input.recovery_pgp_keys ?? []).length > 0 ? ['recovery_pgp_keys'] : []),
          ];
          if (autoSeal) {
            const barrierFlags = [
              ...(input.secret_shares ? ['secret_shares'] : []),
              ...(input.secret_threshold ? ['secret_threshold'] : []),
              ...((input.pgp_keys ?? []).length > 0 ? ['pgp_keys'] : []),
            ];
            if (barrierFlags.length > 0) throw new BadRequestError(`parameters ${barrierFlags.join(',')} not applicable to seal type ${autoSeal}`);
            if (input.stored_shares !== undefined && input.stored_shares > 1) throw new BadRequestError(`stored_shares must be 0 or 1 with seal type ${autoSeal}`);
            return initializeAuto(services, input.recovery_shares ?? 0, input.recovery_threshold ?? 0, input.recovery_pgp_keys ?? [], input.root_token_pgp_key);
          }
          if (recoveryFlags.length > 0) throw new BadRequestError(`parameters ${recoveryFlags.join(',')} not applicable to seal type shamir`);
          if (input.stored_shares) throw new BadRequestError('stored_shares is not supported with Shamir seals');
          const shares = input.secret_shares ?? 0;
          validateShamirConfig(shares, input.secret_threshold ?? 0);
          const pgpKeys = input.pgp_keys ?? [];
          if (pgpKeys.length > 0 && pgpKeys.length !== shares) {
            throw new BadRequestError(`pgp_keys must hold one key per share: got ${pgpKeys.length} keys for ${shares} shares`);
          }
          const shareKeys = pgpKeys.map((text, i) => ({ text, field: `pgp_keys[${i}]` }));
          const rootKey = input.root_token_pgp_key ? [{ text: input.root_token_pgp_key, field: 'root_token_pgp_key' }] : [];
          // Every key is read before anything is created: a bad one must not leave an initialized server.
          const read = await readKeys([...shareKeys, ...rootKey]);
          const recipients = read.slice(0, shareKeys.length);
          const rootRecipient = read[shareKeys.length];
          const result = await services.seal.initialize(shares, input.secret_threshold ?? 0);
          const keys = recipients.length > 0 ? await encryptShares(result.keys, recipients) : result.keys;
          if (keys !== result.keys) result.keys.forEach(zeroize);
          const rootToken = rootRecipient ? (await encryptTo(rootRecipient, Buffer.from(result.rootToken, 'utf8'))).toString('base64') : result.rootToken;
          return {
            raw: {
              status: 200,
              body: {
                keys: keys.map((k) => k.toString('hex')),
                keys_base64: keys.map((k) => k.toString('base64')),
                root_token: rootToken,
              },
            },
          };
        },
      },
    },
    synopsis: 'Initialize a new server.',
    description:
      'GET reports whether the server is initialized. PUT with secret_shares and secret_threshold creates the ' +
      'unseal key (split with Shamir), the root key and the barrier keyring, and returns the key shares and the ' +
      'root token. With pgp_keys each share comes back as base64 of an OpenPGP message to its key (its ' +
      'plaintext is the hex share); with root_token_pgp_key so does the root token. Keybase names are not ' +
      'supported. The server stays sealed afterwards. With an auto seal (a seal stanza in the configuration) ' +
      'the seal wraps the root key instead, and the server unseals itself: recovery_shares and recovery_threshold ' +
      'split a recovery key instead (recovery_keys, recovery_keys_base64; with recovery_pgp_keys encrypted as pgp_keys), ' +
      'whose shares authorize root generation and recovery rekey but never unseal. With recovery_shares 0 there are ' +
      'none until sys/rekey-recovery-key/init creates them.',
  });
}

/** `sys/init` with an auto seal; every key is read before anything is created. */
async function initializeAuto(services: SystemDeps, shares: number, threshold: number, pgpKeys: readonly string[], rootTokenPgpKey: string | undefined) {
  validateRecoveryConfig(shares, threshold);
  if (pgpKeys.length > 0 && pgpKeys.length !== shares) {
    throw new BadRequestError(`recovery_pgp_keys must hold one key per recovery share: got ${pgpKeys.length} keys for ${shares} shares`);
  }
  const shareKeys = pgpKeys.map((text, i) => ({ text, field: `recovery_pgp_keys[${i}]` }));
  const rootKey = rootTokenPgpKey ? [{ text: rootTokenPgpKey, field: 'root_token_pgp_key' }] : [];
  const read = await readKeys([...shareKeys, ...rootKey]);
  const recipients = read.slice(0, shareKeys.length);
  const rootRecipient = read[shareKeys.length];
  const result = await services.seal.initializeAuto(shares, threshold);
  const keys = recipients.length > 0 ? await encryptShares(result.recoveryKeys, recipients) : result.recoveryKeys;
  if (keys !== result.recoveryKeys) result.recoveryKeys.forEach(zeroize);
  const rootToken = rootRecipient ? (await encryptTo(rootRecipient, Buffer.from(result.rootToken, 'utf8'))).toString('base64') : result.rootToken;
  return {
    raw: {
      status: 200,
      body: {
        keys: [],
        keys_base64: [],
        // As Vault and OpenBao: left out when there are none.
        ...(keys.length > 0 ? { recovery_keys: keys.map((k) => k.toString('hex')), recovery_keys_base64: keys.map((k) => k.toString('base64')) } : {}),
        root_token: rootToken,
      },
    },
  };
}
