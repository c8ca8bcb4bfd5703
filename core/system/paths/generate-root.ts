/**
 * Root token generation, in two families over one attempt (core/seal/root-generation.ts):
 * - `sys/generate-root-token/attempt|update` (OpenBao's): needs a token whose policy grants the
 *   path; answers in the usual envelope.
 * - `sys/generate-root/attempt|update` (Vault's): needs no token, so operators who lost every token
 *   can still use it; answers bare JSON. Anyone can reach it, so nothing in it works without the
 *   attempt's nonce: the status does not show it, and cancelling needs it (unauthenticated
 *   cancellation was CVE-2026-5807) — or one of the current unseal key shares, so that whoever
 *   started an attempt cannot keep the share holders out of it, or a token whose policy grants
 *   sudo on the path (as hvac's tests cancel: with the root token, no nonce). An attempt expires
 *   an hour after it started or last took a share. The listener option
 *   `disable_unauthed_generate_root_endpoints` turns the family off.
 * With an auto seal the shares are the recovery key's (core/seal/recovery.ts), as in Vault.
 */
import { BadRequestError, NotFoundError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { RootGenerationProgress, RootGenerationStatus } from '../../seal/root-generation.js';
import type { SystemDeps } from '../services.js';

const attemptFields = {
  otp: {
    type: 'string',
    description: 'A one-time password of otp_length base62 characters to encode the new token with; one is generated when neither otp nor pgp_key is given.',
    sensitive: true,
  },
  pgp_key: { type: 'string', description: 'An OpenPGP public key (base64 of the binary key, at most 64 KiB) to encrypt the new token to.' },
  nonce: { type: 'string', description: 'DELETE: the nonce of the attempt to cancel.' },
} as const;

const unauthedAttemptFields = {
  ...attemptFields,
  key: {
    type: 'string',
    description: 'DELETE: one of the current unseal (or, with an auto seal, recovery) key shares (hex or base64), instead of the nonce: its holder may cancel the attempt.',
    sensitive: true,
  },
} as const;

const updateFields = {
  key: { type: 'string', description: 'One unseal key share (a recovery key share with an auto seal), hex or base64.', sensitive: true },
  nonce: { type: 'string', description: 'The nonce of the attempt.' },
} as const;

function start(services: SystemDeps, otp: string | undefined, pgpKey: string | undefined) {
  return services.seal.rootGeneration.start({ ...(otp !== undefined ? { otp } : {}), ...(pgpKey !== undefined ? { pgpKey } : {}) });
}

function submit(services: SystemDeps, key: string | undefined, nonce: string | undefined): Promise<RootGenerationProgress> {
  if (key === undefined) throw new BadRequestError("'key' must be specified in request body as JSON");
  if (nonce === undefined) throw new BadRequestError("'nonce' must be specified: the nonce of the root generation attempt");
  return services.seal.rootGeneration.update(key, nonce);
}

/** OpenBao's data: nonce and fingerprint only once an attempt is under way. */
function tokenStatusData(status: RootGenerationStatus, otp: string): Record<string, unknown> {
  return {
    started: status.started,
    complete: false,
    progress: status.progress,
    required: status.required,
    otp,
    otp_length: status.otpLength,
    ...(status.started ? { nonce: status.nonce, pgp_fingerprint: status.pgpFingerprint } : {}),
  };
}

/** Vault's bare status; `nonce` is shown only to whoever started the attempt. */
function vaultStatusBody(status: RootGenerationStatus, nonce: string, otp: string): Record<string, unknown> {
  return {
    nonce,
    started: status.started,
    progress: status.progress,
    required: status.required,
    complete: false,
    encoded_token: '',
    encoded_root_token: '',
    pgp_fingerprint: status.pgpFingerprint,
    otp,
    otp_length: status.otpLength,
  };
}

export function generateRootTokenAttemptPath(services: SystemDeps) {
  const generation = services.seal.rootGeneration;
  return definePath({
    pattern: 'generate-root-token/attempt',
    fields: attemptFields,
    operations: {
      read: {
        summary: 'Report the root token generation attempt.',
        handler: async () => {
          services.requireActive();
          return { data: tokenStatusData(await generation.status(), '') };
        },
      },
      update: {
        summary: 'Start a root token generation attempt.',
        handler: async (_req, input) => {
          services.requireActive();
          const { generatedOtp } = await start(services, input.otp, input.pgp_key);
          return { data: tokenStatusData(await generation.status(), generatedOtp) };
        },
      },
      delete: {
        summary: 'Cancel the root token generation attempt.',
        handler: async (_req, input) => {
          services.requireActive();
          await generation.cancel(input.nonce !== undefined ? { nonce: input.nonce } : undefined);
          return null;
        },
      },
    },
    synopsis: 'Start, inspect or cancel a root token generation (token-authenticated).',
    description:
      'PUT starts an attempt: with pgp_key the new token is encrypted to it, with otp (otp_length base62 characters) ' +
      'it is XORed with it, with neither an OTP is generated and answered once. GET shows the attempt with its ' +
      'nonce; DELETE cancels it (a nonce, when given, must match). One attempt runs at a time, shared with ' +
      'sys/generate-root; it expires an hour after it started or last took a share.',
  });
}

export function generateRootTokenUpdatePath(services: SystemDeps) {
  return definePath({
    pattern: 'generate-root-token/update',
    fields: updateFields,
    operations: {
      update: {
        summary: 'Submit an unseal key share to the attempt.',
        handler: async (_req, input) => {
          services.requireActive();
          const result = await submit(services, input.key, input.nonce);
          return {
            data: {
              started: true,
              complete: result.complete,
              progress: result.progress,
              required: result.required,
              nonce: input.nonce,
              encoded_token: result.encodedToken,
              pgp_fingerprint: result.pgpFingerprint,
            },
          };
        },
      },
    },
    synopsis: 'Submit unseal key shares to a root token generation (token-authenticated).',
    description:
      'Each call adds one share. At the threshold a new root token is minted and answered as encoded_token: base64 ' +
      'of the token XOR the OTP (decode with sys/decode-token), or base64 of a PGP message to pgp_key.',
  });
}

/** `key` proves a share holder only to cancel; anywhere else it would be ignored, so it is refused. */
function refuseKey(key: string | undefined): void {
  if (key !== undefined) {
    throw new BadRequestError("'key' is taken only to cancel the attempt (DELETE); submit key shares to sys/generate-root/update");
  }
}

/** Vault's family, unless the configuration turned it off. */
function requireUnauthed(services: SystemDeps): void {
  if (!services.unauthedGenerateRoot) {
    throw new NotFoundError(
      'unauthenticated root generation is disabled on this server (disable_unauthed_generate_root_endpoints); use sys/generate-root-token with a token',
    );
  }
}

export function generateRootAttemptPath(services: SystemDeps) {
  const generation = services.seal.rootGeneration;
  return definePath({
    pattern: 'generate-root/attempt',
    fields: unauthedAttemptFields,
    unauthenticated: true,
    // Not required: a caller whose token's policy grants sudo here may cancel without the nonce.
    sudo: true,
    operations: {
      read: {
        summary: 'Report the root generation attempt (without its nonce).',
        handler: async (_req, input) => {
          requireUnauthed(services);
          services.requireActive();
          refuseKey(input.key);
          return { raw: { status: 200, body: vaultStatusBody(await generation.status(), '', '') } };
        },
      },
      update: {
        summary: 'Start a root generation attempt.',
        handler: async (_req, input) => {
          requireUnauthed(services);
          services.requireActive();
          refuseKey(input.key);
          const { nonce, generatedOtp } = await start(services, input.otp, input.pgp_key);
          return { raw: { status: 200, body: vaultStatusBody(await generation.status(), nonce, generatedOtp) } };
        },
      },
      delete: {
        summary: 'Cancel the root generation attempt (needs its nonce, a current key share, or a token with sudo).',
        handler: async (req, input) => {
          requireUnauthed(services);
          services.requireActive();
          if (input.nonce && input.key) throw new BadRequestError("give either 'nonce' or 'key' to cancel a root generation, not both");
          if (input.key) await generation.cancel({ share: input.key });
          else if (input.nonce) await generation.cancel({ nonce: input.nonce });
          else if (req.auth?.sudo) await generation.cancel();
          else {
            throw new BadRequestError(
              "'nonce' is required to cancel a root generation without a token: the nonce answered when the attempt started, " +
                "or 'key', one of the current unseal key shares (or cancel with a token whose policy grants sudo on this path, " +
                'or with sys/generate-root-token/attempt)',
            );
          }
          return null;
        },
      },
    },
    synopsis: "Start, inspect or cancel a root generation (Vault's unauthenticated endpoint).",
    description:
      'As sys/generate-root-token/attempt, without a token and with bare JSON answers. The nonce is answered only ' +
      'to the caller who starts the attempt; share holders get it from them. DELETE needs it (body or query), or ' +
      'key, one of the current unseal key shares (in the body), or a token whose policy grants sudo on this path. ' +
      'An attempt expires an hour after it started or last took a share. Turned off by the listener option ' +
      'disable_unauthed_generate_root_endpoints.',
  });
}

export function generateRootUpdatePath(services: SystemDeps) {
  return definePath({
    pattern: 'generate-root/update',
    fields: updateFields,
    unauthenticated: true,
    operations: {
      update: {
        summary: 'Submit an unseal key share to the attempt.',
        handler: async (_req, input) => {
          requireUnauthed(services);
          services.requireActive();
          const result = await submit(services, input.key, input.nonce);
          return {
            raw: {
              status: 200,
              body: {
                nonce: input.nonce,
                started: true,
                progress: result.progress,
                required: result.required,
                complete: result.complete,
                encoded_token: result.encodedToken,
                encoded_root_token: result.encodedToken,
                pgp_fingerprint: result.pgpFingerprint,
                otp: '',
                otp_length: 0,
              },
            },
          };
        },
      },
    },
    synopsis: "Submit unseal key shares to a root generation (Vault's unauthenticated endpoint).",
    description: 'As sys/generate-root-token/update, without a token and with bare JSON answers (encoded_token and encoded_root_token).',
  });
}

/** `sys/generate-root`: the older spelling of `sys/generate-root/attempt` that Vault still serves. */
export function generateRootLegacyPath(services: SystemDeps) {
  return {
    ...generateRootAttemptPath(services),
    pattern: 'generate-root',
    synopsis: 'The older spelling of sys/generate-root/attempt.',
    description: 'Answers as sys/generate-root/attempt does: read, start and cancel a root generation without a token.',
  };
}
