/** `sys/init`: whether the server is initialized, and initializing it. */
import { AlreadyInitializedError, BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { encryptShares, encryptTo, readKeys } from '../../seal/pgp.js';
import { validateShamirConfig } from '../../seal/seal-manager.js';
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
      stored_shares: { type: 'int', description: 'Accepted for compatibility; must be 0 with Shamir seals.' },
      recovery_shares: { type: 'int', description: 'Accepted for compatibility; ignored with Shamir seals.' },
      recovery_threshold: { type: 'int', description: 'Accepted for compatibility; ignored with Shamir seals.' },
      recovery_pgp_keys: { type: 'comma-string-list', description: 'Accepted for compatibility; ignored with Shamir seals.' },
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
      'supported. The server stays sealed afterwards.',
  });
}
