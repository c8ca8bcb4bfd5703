/**
 * `sign/:name(/:hash_algorithm)`: signatures with ECDSA, Ed25519 (also derived per context, and
 * Ed25519ctx and Ed25519ph with signature_context and prehashed) and RSA
 * keys (https://developer.hashicorp.com/vault/api-docs/secret/transit#sign-data; their formats:
 * docs/transit.md, "Ciphertexts, signatures and HMACs"). Also the option parsing that verify
 * shares. Unlike Vault, which answers some single-item signing failures (a bad key_version, a
 * version without its private part, a bad salt length) with a 500, every user error is a 400.
 */
import type { KeyObject } from 'node:crypto';
import { BadRequestError, definePath, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';
import { decodeBase64 } from '../crypto/base64.js';
import { answerEntries, inSlices } from '../crypto/slices.js';
import { signingCost } from '../crypto/costs.js';
import { derivedEd25519PrivateKey, ed25519RawPublic, MISSING_CONTEXT } from '../crypto/derive.js';
import {
  formatSignature,
  isSignatureHash,
  NONE_REQUIRES,
  parseSaltLength,
  signBytes,
  type Marshaling,
  type SignatureAlgorithm,
  type SignOptions,
  type SigningFamily,
} from '../crypto/signing.js';
import { inputLength, readBatchItems, referenceOf, runItems, single, type BatchItem } from './hmac.js';
import { checkPqOptions, isPqFamily, runItemsAsync, signPq } from './pq-items.js';
import type { PqFamily } from '../crypto/pq-signing.js';

/** The request-wide options of sign and verify, as given (before checking). */
export interface SigningOptionFields {
  readonly hash_algorithm?: string | undefined;
  readonly algorithm?: string | undefined;
  readonly prehashed: boolean;
  readonly signature_algorithm: string;
  readonly marshaling_algorithm: string;
  readonly salt_length: string;
}

/** A signature made for one item. */
interface Signed {
  readonly signature: string;
  readonly version: number;
  /** The derived Ed25519 public key (raw 32 bytes), for derived keys only. */
  readonly publicKey?: Buffer;
}

type SignInput = FieldValues<typeof SIGN_FIELDS>;

/** Fields sign and verify have in common. */
export const SIGNING_OPTION_FIELDS = {
  hash_algorithm: {
    type: 'string',
    description:
      'Hash algorithm, in the URL or the body (default sha2-256): sha1, sha2-224, sha2-256, sha2-384, sha2-512, sha3-224, ' +
      'sha3-256, sha3-384, sha3-512, or none (needs prehashed=true and signature_algorithm=pkcs1v15: a PKCS#1 v1.5 signature ' +
      'without the hash OID). For ed25519 keys only sha2-512 means anything: with prehashed=true it selects Ed25519ph.',
  },
  algorithm: { type: 'string', description: 'Deprecated: use hash_algorithm.', deprecated: true },
  context: { type: 'string', description: 'Base64 context the key is derived from; required for derived (ed25519) keys.' },
  signature_context: {
    type: 'string',
    description:
      'ed25519 keys: base64 context (up to 255 bytes) of an Ed25519ctx signature, or of an Ed25519ph one with prehashed=true ' +
      'and hash_algorithm=sha2-512. Batch items carry their own.',
  },
  prehashed: {
    type: 'bool',
    description:
      'The input is already a digest (base64 of the binary digest); for RSA keys hash_algorithm names its hash; for ed25519 keys, ' +
      'with hash_algorithm=sha2-512, the input is the SHA-512 digest of the message and the signature is Ed25519ph.',
    default: false,
  },
  signature_algorithm: {
    type: 'string',
    description: 'RSA keys: pss (default) or pkcs1v15.',
    default: 'pss',
  },
  marshaling_algorithm: {
    type: 'string',
    description:
      'asn1 (default: standard base64; ECDSA signatures as DER) or jws (unpadded base64url; ECDSA signatures as fixed-width r‖s, as in JWS).',
    default: 'asn1',
  },
  salt_length: {
    type: 'string',
    description:
      'RSA-PSS salt length: auto (default; the largest possible when signing, detected when verifying), hash (the hash length), ' +
      'or an integer from -1 to the largest the key and hash allow.',
    default: 'auto',
  },
  reference: {
    type: 'string',
    description: 'Echoed in batch_results: the reference of every batch item that carries none of its own. Ignored without batch_input.',
  },
} as const satisfies FieldSpecs;

const SIGN_FIELDS = {
  name: { type: 'name', description: 'Name of the key; it must support signing.', required: true },
  key_version: {
    type: 'int',
    description: 'Version of the key to sign with: 0 (the default) is the latest; otherwise at least min_encryption_version.',
    default: 0,
  },
  input: { type: 'string', description: 'Base64 data to sign (empty when omitted); one of input or batch_input.' },
  batch_input: {
    type: 'object-list',
    description:
      'Items {input, context, signature_context, reference} signed in one request, results in input order; the top-level input, ' +
      'context and signature_context are then ignored. Results carry the signature, key_version, and for derived ed25519 keys the ' +
      'derived public key (publickey).',
  },
  ...SIGNING_OPTION_FIELDS,
} as const satisfies FieldSpecs;

export function signPath(ctx: TransitContext) {
  return definePath({
    pattern: 'sign/:name/:hash_algorithm?',
    fields: SIGN_FIELDS,
    operations: {
      update: { summary: 'Sign input data with a named key.', handler: (req, input) => signHandler(ctx, req, input) },
    },
    synopsis: HELP_SYNOPSIS,
    description: HELP_DESCRIPTION,
  });
}

async function signHandler(ctx: TransitContext, _req: LogicalRequest, input: SignInput) {
  const options = signingOptions(input);
  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('signing key not found');
  const family = signingFamily(policy, 'signing');
  checkNoneHash(options);
  if (isPqFamily(family)) checkPqOptions(family, options);

  const batch = input.batch_input !== undefined;
  const items: BatchItem[] = input.batch_input
    ? readBatchItems(input.batch_input, ['input', 'context', 'signature_context', 'reference'])
    : [
        {
          input: input.input ?? '',
          ...(input.context !== undefined ? { context: input.context } : {}),
          ...(input.signature_context !== undefined ? { signature_context: input.signature_context } : {}),
        },
      ];
  checkSignatureContext(family, items);

  // A bad key_version fails every item (after its own input checks), as Vault reports it per item.
  let version: KeyVersion | undefined;
  let versionError: BadRequestError | undefined;
  try {
    version = versionForSigning(policy, input.key_version);
  } catch (err) {
    if (!(err instanceof BadRequestError)) throw err;
    versionError = err;
  }

  const results = await inSlices(items, signingCost(policy, 'private', inputLength, usesEd25519Variant(family, options, items)), (slice) =>
    isPqFamily(family)
      ? runItemsAsync(slice, (item): Promise<Signed> => {
          const data = itemInput(item);
          if (versionError) throw versionError;
          return signPq(policy, family, version!, data, options);
        })
      : runItems(slice, (item): Signed => {
          const data = itemInput(item);
          const context = item.context ? decodeBase64(item.context, 'context') : undefined;
          const signatureContext = item.signature_context ? decodeBase64(item.signature_context, 'signature_context') : undefined;
          if (versionError) throw versionError;
          return signOne(policy, family, version!, data, { context, signatureContext }, options);
        }),
  );

  if (!batch) {
    const signed = single(results[0]!);
    return {
      data: {
        signature: signed.signature,
        key_version: signed.version,
        ...(signed.publicKey ? { public_key: signed.publicKey.toString('base64') } : {}),
      },
    };
  }
  return {
    data: {
      batch_results: await answerEntries(results, (outcome, i) => {
        const reference = referenceOf(items[i]!, input.reference);
        if ('error' in outcome) return { key_version: 0, error: outcome.error, reference };
        const signed = outcome.ok;
        return {
          signature: signed.signature,
          key_version: signed.version,
          ...(signed.publicKey ? { publickey: signed.publicKey.toString('base64') } : {}),
          reference,
        };
      }),
    },
  };
}

function itemInput(item: BatchItem): Buffer {
  if (item.input === undefined) throw new BadRequestError('missing input');
  return decodeBase64(item.input, 'input');
}

/** An item's two contexts: `context` derives the key, `signatureContext` goes into an Ed25519ctx or Ed25519ph signature. */
export interface ItemContexts {
  readonly context: Buffer | undefined;
  readonly signatureContext: Buffer | undefined;
}

function signOne(policy: KeyPolicy, family: SigningFamily, version: KeyVersion, data: Buffer, { context, signatureContext }: ItemContexts, options: SignOptions): Signed {
  let key: KeyObject;
  let publicKey: Buffer | undefined;
  if (family === 'ed25519' && policy.settings.derived) {
    if (!context || context.length === 0) throw new BadRequestError(MISSING_CONTEXT);
    key = derivedEd25519PrivateKey(version, context);
    publicKey = ed25519RawPublic(key);
  } else {
    key = version.privateKey!;
  }
  const signature = formatSignature(version.version, signBytes(family, key, data, options, signatureContext), options.marshaling);
  return { signature, version: version.version, ...(publicKey ? { publicKey } : {}) };
}

/**
 * The version to sign with (docs/transit.md, "Keys and their one-way settings"): 0 = latest; not negative, not above the latest, not
 * below min_encryption_version; and, as Vault keeps such versions out of its working set, not
 * below min_decryption_version either (a signature nobody could verify). It must hold a private key.
 */
function versionForSigning(policy: KeyPolicy, requested: number): KeyVersion {
  const version = policy.versionForWriting(requested, 'signing');
  if (version.version < policy.settings.minDecryptionVersion) {
    throw new BadRequestError('requested version for signing is less than the minimum decryption key version');
  }
  if (!version.privateKey) throw new BadRequestError('requested version for signing does not contain a private part');
  return version;
}

// ---------------------------------------------------------------------------------------------
// Shared with verify

/**
 * The options of a sign or verify request, checked in Vault's order with Vault's texts. The hash
 * comes from the URL segment or the body's hash_algorithm, else the deprecated `algorithm`.
 */
export function signingOptions(input: SigningOptionFields): SignOptions {
  const hash = input.hash_algorithm ?? input.algorithm ?? 'sha2-256';
  if (!isSignatureHash(hash)) throw new BadRequestError(`invalid hash algorithm "${hash}"`);
  const marshaling = input.marshaling_algorithm;
  if (!isMarshaling(marshaling)) throw new BadRequestError(`invalid marshaling type "${marshaling}"`);
  const saltLength = parseSaltLength(input.salt_length);
  const signatureAlgorithm = input.signature_algorithm;
  if (!isSignatureAlgorithm(signatureAlgorithm)) {
    throw new BadRequestError(`unsupported signature_algorithm "${signatureAlgorithm}"; must be "pss" or "pkcs1v15"`);
  }
  return { hash, prehashed: input.prehashed, signatureAlgorithm, saltLength, marshaling };
}


/** The signing family of a key, or 400 `key type X does not support signing|verification`. */
export function signingFamily(policy: KeyPolicy, what: 'signing' | 'verification'): SigningFamily | PqFamily {
  const family = policy.info.family;
  if (!policy.info.signing || (family !== 'ecdsa' && family !== 'ed25519' && family !== 'rsa' && !isPqFamily(family))) {
    throw new BadRequestError(`key type ${policy.info.name} does not support ${what}`);
  }
  return family;
}

/** Whether the items are Ed25519ctx or Ed25519ph signatures, which cost more than pure Ed25519 ones. */
export function usesEd25519Variant(family: SigningFamily | PqFamily, options: SignOptions, items: readonly BatchItem[]): boolean {
  return family === 'ed25519' && (options.prehashed || items.some((item) => item.signature_context));
}

/** signature_context belongs to Ed25519ctx and Ed25519ph: refused for keys of other types rather than ignored. */
export function checkSignatureContext(family: SigningFamily | PqFamily, items: readonly BatchItem[]): void {
  if (family !== 'ed25519' && items.some((item) => item.signature_context)) {
    throw new BadRequestError('signature_context applies to ed25519 keys only (Ed25519ctx and Ed25519ph signatures)');
  }
}

/**
 * `none` signs the given bytes with PKCS#1 v1.5 and no DigestInfo, so it needs prehashed input and
 * pkcs1v15 spelled out (the default is pss).
 */
export function checkNoneHash(options: SignOptions): void {
  if (options.hash === 'none' && (!options.prehashed || options.signatureAlgorithm !== 'pkcs1v15')) throw new BadRequestError(NONE_REQUIRES);
}

function isMarshaling(value: string): value is Marshaling {
  return value === 'asn1' || value === 'jws';
}

function isSignatureAlgorithm(value: string): value is SignatureAlgorithm {
  return value === 'pss' || value === 'pkcs1v15';
}

const HELP_SYNOPSIS = 'Generate a signature for input data using the named key.';
const HELP_DESCRIPTION =
  'Returns vault:v<N>:<signature> and key_version. ECDSA and RSA keys sign a digest of the input with hash_algorithm ' +
  '(or the input itself when prehashed); ed25519, ml-dsa and slh-dsa keys sign the input (pure mode); hybrid keys make the ' +
  'IETF composite ML-DSA signature (ML-DSA signature followed by the ECDSA or Ed25519 one). RSA keys use PSS (salt_length) or PKCS#1 v1.5. ' +
  'Derived ed25519 keys need a context and also return the derived public key. ed25519 keys sign Ed25519ctx with a ' +
  'signature_context, and Ed25519ph of a SHA-512 digest with prehashed=true and hash_algorithm=sha2-512. With batch_input every item gets its own ' +
  'result (signature, key_version, or error, and its reference); the request still answers 200.';
