/**
 * `sys/rekey/init`, `sys/rekey/update`, `sys/rekey/verify`, `sys/rekey/backup`: new unseal key
 * shares from a threshold of the current ones, with Vault's request and response shapes.
 *
 * Vault serves these without a token, so anyone who can reach the listener can start, or (before
 * Vault 1.20's nonce check) cancel, an operator's rekey (CVE-2025-4656 / CVE-2025-52894). OpenBao
 * fixed it by turning them off and adding token-authenticated equivalents; here they need a token
 * whose policy grants the path, and a cancel that names a nonce must name the rekey's.
 *
 * `sys/rekey-recovery-key/*` and `sys/rekey/recovery-key-backup` are the same for the recovery key
 * of an auto seal (what `vault operator rekey -target=recovery` calls). Its init needs sudo, as
 * OpenBao's sys/rotate/recovery does: when the store was initialized with recovery_shares = 0 it
 * answers new shares at once, with no current share to authorize it.
 */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { Rekey, RekeyResult, RekeyStatus, RekeyVerifyStatus } from '../../seal/rekey.js';
import type { KeyBackup } from '../../seal/seal-keys.js';
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

/** The key a family of rekey paths acts on: the unseal key's shares or the recovery key's. */
export interface RekeyTarget {
  /** `rekey` or `rekey-recovery-key`. */
  readonly prefix: string;
  readonly backupPattern: string;
  /** What the keys are called in descriptions. */
  readonly keys: string;
  rekey(services: SystemDeps): Rekey;
  readBackup(services: SystemDeps): Promise<KeyBackup | undefined>;
  deleteBackup(services: SystemDeps): Promise<void>;
  /** Whether starting needs sudo. */
  readonly sudo: boolean;
}

export const UNSEAL_KEYS: RekeyTarget = {
  prefix: 'rekey',
  backupPattern: 'rekey/backup',
  keys: 'unseal key',
  rekey: (services) => services.seal.rekey,
  readBackup: (services) => services.seal.readKeyBackup(),
  deleteBackup: (services) => services.seal.deleteKeyBackup(),
  sudo: false,
};

export const RECOVERY_KEYS: RekeyTarget = {
  prefix: 'rekey-recovery-key',
  backupPattern: 'rekey/recovery-key-backup',
  keys: 'recovery key',
  rekey: (services) => services.seal.recoveryRekey,
  readBackup: (services) => services.seal.recovery.readKeyBackup(),
  deleteBackup: (services) => services.seal.recovery.deleteKeyBackup(),
  sudo: true,
};

function requireKeyAndNonce(key: string | undefined, nonce: string | undefined, of: string): { key: string; nonce: string } {
  if (key === undefined) throw new BadRequestError("'key' must be specified in request body as JSON");
  if (nonce === undefined) throw new BadRequestError(`'nonce' must be specified: the nonce of the ${of}`);
  return { key, nonce };
}

export function rekeyInitPath(services: SystemDeps, target: RekeyTarget = UNSEAL_KEYS) {
  const rekey = target.rekey(services);
  return definePath({
    pattern: `${target.prefix}/init`,
    ...(target.sudo ? { sudo: true } : {}),
    fields: {
      secret_shares: { type: 'int', description: `Number of new key shares to split the new ${target.keys} into.`, minimum: 1, maximum: 255 },
      secret_threshold: { type: 'int', description: `Number of new key shares needed to reconstruct the ${target.keys}.`, minimum: 1, maximum: 255 },
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
      stored_shares: { type: 'int', description: 'Accepted for compatibility (the vault CLI sends 0); must be 0.' },
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
          if (input.stored_shares) throw new BadRequestError(`stored_shares is not supported when rekeying the ${target.keys}`);
          const shares = input.secret_shares ?? 0;
          const threshold = input.secret_threshold ?? 0;
          validateShamirConfig(shares, threshold);
          const done = await rekey.start({ shares, threshold, pgpKeys: input.pgp_keys ?? [], backup: input.backup, requireVerification: input.require_verification });
          // A recovery key without shares yet: the new ones, at once (OpenBao's behaviour).
          if (done) return { raw: { status: 200, body: { ...resultBody(done), t: threshold, n: shares } } };
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
    synopsis: `Start, inspect or cancel a rekey of the ${target.keys}.`,
    description:
      'PUT starts a rekey to secret_shares new shares with secret_threshold, answering its nonce; one rekey runs at a ' +
      'time. GET shows it: the new t and n, how many current shares came in (progress) of the current threshold ' +
      '(required). DELETE cancels it; the current shares stay valid. Needs a token (unlike Vault).' +
      (target.sudo ? ' Needs sudo; when the recovery key has no shares yet (recovery_shares = 0 at init), PUT answers the new shares at once.' : ''),
  });
}

export function rekeyUpdatePath(services: SystemDeps, target: RekeyTarget = UNSEAL_KEYS) {
  const rekey = target.rekey(services);
  return definePath({
    pattern: `${target.prefix}/update`,
    fields: {
      key: { type: 'string', description: `One current ${target.keys} share, hex or base64.`, sensitive: true },
      nonce: { type: 'string', description: 'The nonce of the rekey.' },
    },
    operations: {
      update: {
        summary: 'Submit a current key share.',
        handler: async (_req, input) => {
          services.requireActive();
          const { key, nonce } = requireKeyAndNonce(input.key, input.nonce, `rekey (GET sys/${target.prefix}/init)`);
          const result = await rekey.update(key, nonce);
          return { raw: { status: 200, body: result ? resultBody(result) : statusBody(await rekey.status()) } };
        },
      },
    },
    synopsis: `Submit current ${target.keys} shares to a rekey.`,
    description:
      'Each call adds one current share. Below the threshold it answers the rekey status; at it, the new shares ' +
      '(keys, keys_base64; PGP messages when pgp_keys were given, with pgp_fingerprints). Without verification ' +
      'they take effect at once and the old shares stop working.',
  });
}

export function rekeyVerifyPath(services: SystemDeps, target: RekeyTarget = UNSEAL_KEYS) {
  const rekey = target.rekey(services);
  return definePath({
    pattern: `${target.prefix}/verify`,
    fields: {
      key: { type: 'string', description: `One of the new ${target.keys} shares, hex or base64.`, sensitive: true },
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
      `With require_verification, a threshold of the new shares must be submitted at sys/${target.prefix}/verify (with verification_nonce) ` +
      'before the rekey takes effect. DELETE forgets the new shares submitted so far and answers a new nonce.',
  });
}

export function rekeyBackupPath(services: SystemDeps, target: RekeyTarget = UNSEAL_KEYS) {
  return definePath({
    pattern: target.backupPattern,
    fields: {},
    operations: {
      read: {
        summary: 'Read the backed-up PGP-encrypted shares.',
        handler: async () => {
          services.requireActive();
          const backup = await target.readBackup(services);
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
          await target.deleteBackup(services);
          return null;
        },
      },
    },
    synopsis: `The PGP-encrypted ${target.keys} shares a rekey with backup kept.`,
    description:
      'GET answers the rekey nonce and, by PGP fingerprint, the encrypted shares (keys in hex, keys_base64). ' +
      'They stay until DELETE removes them.',
  });
}
