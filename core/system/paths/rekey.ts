/**
 * `sys/rekey/init`, `sys/rekey/update`, `sys/rekey/verify`, `sys/rekey/backup`: new unseal key
 * shares from a threshold of the current ones, with Vault's request and response shapes.
 *
 * Vault serves these without a token, so anyone who can reach the listener can start, or (before
 * Vault 1.20's nonce check) cancel, an operator's rekey (CVE-2025-4656 / CVE-2025-52894). OpenBao
 * fixed it by turning them off and adding token-authenticated equivalents; here they need a token
 * whose policy grants the path, and a cancel that names a nonce must name the rekey's.
 */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { RekeyResult, RekeyStatus, RekeyVerifyStatus } from '../../seal/rekey.js';
import { validateShamirConfig } from '../../seal/shares.js';
import type { SystemDeps } from '../services.js';

function statusBody(status: RekeyStatus): Record<string, unknown> {
  return {
    nonce: status.nonce,
    started: status.started,
    t: status.t,
    n: status.n,
    progress: status.progress,
    required: status.required,
    pgp_fingerprints: status.pgpFingerprints,
    backup: status.backup,
    verification_required: status.verificationRequired,
    ...(status.verificationNonce ? { verification_nonce: status.verificationNonce } : {}),
  };
}

function resultBody(result: RekeyResult): Record<string, unknown> {
  return {
    nonce: result.nonce,
    complete: true,
    keys: result.keys.map((k) => k.toString('hex')),
    keys_base64: result.keys.map((k) => k.toString('base64')),
    pgp_fingerprints: result.pgpFingerprints,
    backup: result.backup,
    verification_required: result.verificationRequired,
    ...(result.verificationNonce ? { verification_nonce: result.verificationNonce } : {}),
  };
}

function verifyBody(status: RekeyVerifyStatus): Record<string, unknown> {
  return { nonce: status.nonce, started: status.started, t: status.t, n: status.n, progress: status.progress };
}

function requireKeyAndNonce(key: string | undefined, nonce: string | undefined, of: string): { key: string; nonce: string } {
  if (key === undefined) throw new BadRequestError("'key' must be specified in request body as JSON");
  if (nonce === undefined) throw new BadRequestError(`'nonce' must be specified: the nonce of the ${of}`);
  return { key, nonce };
}

export function rekeyInitPath(services: SystemDeps) {
  const rekey = services.seal.rekey;
  return definePath({
    pattern: 'rekey/init',
    fields: {
      secret_shares: { type: 'int', description: 'Number of new key shares to split the new unseal key into.', minimum: 1, maximum: 255 },
      secret_threshold: { type: 'int', description: 'Number of new key shares needed to unseal.', minimum: 1, maximum: 255 },
      pgp_keys: {
        type: 'comma-string-list',
        description: 'One OpenPGP public key per new share (base64 of the binary key, at most 64 KiB); each share is returned encrypted to its key.',
      },
      backup: { type: 'bool', description: 'Keep the PGP-encrypted new shares in storage, readable at sys/rekey/backup (needs pgp_keys).', default: false },
      require_verification: {
        type: 'bool',
        description: 'Return the new shares without using them: a threshold of them must come back through sys/rekey/verify first.',
        default: false,
      },
      stored_shares: { type: 'int', description: 'Accepted for compatibility (the vault CLI sends 0); must be 0 with Shamir seals.' },
      nonce: { type: 'string', description: 'DELETE: the nonce of the rekey to cancel; when given, it must be the current one.' },
    },
    operations: {
      read: {
        summary: 'Report the rekey in progress.',
        handler: async () => {
          services.requireActive();
          return { raw: { status: 200, body: statusBody(await rekey.status()) } };
        },
      },
      update: {
        summary: 'Start a rekey.',
        handler: async (_req, input) => {
          services.requireActive();
          if (input.stored_shares) throw new BadRequestError('stored_shares is not supported with Shamir seals');
          const shares = input.secret_shares ?? 0;
          const threshold = input.secret_threshold ?? 0;
          validateShamirConfig(shares, threshold);
          await rekey.start({ shares, threshold, pgpKeys: input.pgp_keys ?? [], backup: input.backup, requireVerification: input.require_verification });
          return { raw: { status: 200, body: statusBody(await rekey.status()) } };
        },
      },
      delete: {
        summary: 'Cancel the rekey in progress.',
        handler: async (_req, input) => {
          services.requireActive();
          await rekey.cancel(input.nonce);
          return null;
        },
      },
    },
    synopsis: 'Start, inspect or cancel a rekey of the unseal key.',
    description:
      'PUT starts a rekey to secret_shares new shares with secret_threshold, answering its nonce; one rekey runs at a ' +
      'time. GET shows it: the new t and n, how many current shares came in (progress) of the current threshold ' +
      '(required). DELETE cancels it; the current shares stay valid. Needs a token (unlike Vault).',
  });
}

export function rekeyUpdatePath(services: SystemDeps) {
  const rekey = services.seal.rekey;
  return definePath({
    pattern: 'rekey/update',
    fields: {
      key: { type: 'string', description: 'One current unseal key share, hex or base64.', sensitive: true },
      nonce: { type: 'string', description: 'The nonce of the rekey.' },
    },
    operations: {
      update: {
        summary: 'Submit a current key share.',
        handler: async (_req, input) => {
          services.requireActive();
          const { key, nonce } = requireKeyAndNonce(input.key, input.nonce, 'rekey (GET sys/rekey/init)');
          const result = await rekey.update(key, nonce);
          return { raw: { status: 200, body: result ? resultBody(result) : statusBody(await rekey.status()) } };
        },
      },
    },
    synopsis: 'Submit current unseal key shares to a rekey.',
    description:
      'Each call adds one current share. Below the threshold it answers the rekey status; at it, the new shares ' +
      '(keys, keys_base64; PGP messages when pgp_keys were given, with pgp_fingerprints). Without verification ' +
      'they take effect at once and the old shares stop working.',
  });
}

export function rekeyVerifyPath(services: SystemDeps) {
  const rekey = services.seal.rekey;
  return definePath({
    pattern: 'rekey/verify',
    fields: {
      key: { type: 'string', description: 'One of the new unseal key shares, hex or base64.', sensitive: true },
      nonce: { type: 'string', description: 'The verification nonce (verification_nonce).' },
    },
    operations: {
      read: {
        summary: 'Report the verification in progress.',
        handler: async () => {
          services.requireActive();
          return { raw: { status: 200, body: verifyBody(await rekey.verifyStatus()) } };
        },
      },
      update: {
        summary: 'Submit a new key share for verification.',
        handler: async (_req, input) => {
          services.requireActive();
          const { key, nonce } = requireKeyAndNonce(input.key, input.nonce, 'verification (verification_nonce)');
          const done = await rekey.verify(key, nonce);
          return { raw: { status: 200, body: done ? { nonce: done.nonce, complete: true } : verifyBody(await rekey.verifyStatus()) } };
        },
      },
      delete: {
        summary: 'Restart the verification under a new nonce.',
        handler: async () => {
          services.requireActive();
          await rekey.restartVerification();
          return { raw: { status: 200, body: verifyBody(await rekey.verifyStatus()) } };
        },
      },
    },
    synopsis: 'Confirm the new shares of a rekey before they take effect.',
    description:
      'With require_verification, a threshold of the new shares must be submitted here (with verification_nonce) ' +
      'before the rekey takes effect. DELETE forgets the new shares submitted so far and answers a new nonce.',
  });
}

export function rekeyBackupPath(services: SystemDeps) {
  return definePath({
    pattern: 'rekey/backup',
    fields: {},
    operations: {
      read: {
        summary: 'Read the backed-up PGP-encrypted shares.',
        handler: async () => {
          services.requireActive();
          const backup = await services.seal.readKeyBackup();
          if (!backup) throw new BadRequestError('no backed-up keys found');
          const keysBase64 = Object.fromEntries(
            Object.entries(backup.keys).map(([fingerprint, keys]) => [fingerprint, keys.map((k) => Buffer.from(k, 'hex').toString('base64'))]),
          );
          return { data: { nonce: backup.nonce, keys: backup.keys, keys_base64: keysBase64 } };
        },
      },
      delete: {
        summary: 'Delete the backed-up shares.',
        handler: async () => {
          services.requireActive();
          await services.seal.deleteKeyBackup();
          return null;
        },
      },
    },
    synopsis: 'The PGP-encrypted shares a rekey with backup kept.',
    description:
      'GET answers the rekey nonce and, by PGP fingerprint, the encrypted shares (keys in hex, keys_base64). ' +
      'They stay until DELETE removes them.',
  });
}
