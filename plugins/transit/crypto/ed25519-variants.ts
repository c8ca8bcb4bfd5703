/**
 * Ed25519ctx and Ed25519ph (RFC 8032 §5.1), as Vault Enterprise selects them on sign and verify
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#sign-data): `signature_context`
 * (base64, up to 255 bytes) with plain input is Ed25519ctx; `prehashed=true` with
 * `hash_algorithm=sha2-512` is Ed25519ph over the given 64-byte SHA-512 digest, with the context
 * when one is given; neither is pure Ed25519, which node:crypto signs. Every other combination is
 * refused naming the field, never signed as another variant than the caller asked for.
 *
 * node:crypto cannot make these (Node 24's OpenSSL 3.0 has neither, and `crypto.sign` ignores a
 * `context` on an Ed25519 key), so they are @noble/curves' EdDSA over edwards25519 with the
 * RFC's dom2 prefix. Its `ed25519ph` hashes the message itself; Vault's callers send the digest,
 * so Ed25519ph here is the same construction with the digest taken as PH(M).
 */
import { createHash, type KeyObject } from 'node:crypto';
import { ed25519, ed25519ctx } from '@noble/curves/ed25519.js';
import { eddsa } from '@noble/curves/abstract/edwards.js';
import { BadRequestError } from '../../../sdk/index.js';

/** Which Ed25519 a request asks for. */
export type Ed25519Variant =
  | { readonly kind: 'pure' }
  | { readonly kind: 'ctx'; readonly context: Uint8Array }
  | { readonly kind: 'ph'; readonly context: Uint8Array };

/** What selects the variant: the request's hash and prehashed flag, and the item's signature_context. */
export interface VariantOptions {
  readonly hash: string;
  readonly prehashed: boolean;
}

const PURE: Ed25519Variant = { kind: 'pure' };
/** RFC 8032 §5.1: a dom2 context has at most 255 bytes. */
const MAX_CONTEXT = 255;
const DOM2_PREFIX = new TextEncoder().encode('SigEd25519 no Ed25519 collisions');
const SHA512_BYTES = 64;

/** dom2(phflag, context) ‖ data (RFC 8032 §5.1). */
function dom2(data: Uint8Array, context: Uint8Array, phflag: boolean): Uint8Array {
  if (context.length > MAX_CONTEXT) throw new BadRequestError(`signature_context has ${context.length} bytes; Ed25519 contexts have at most ${MAX_CONTEXT}`);
  const out = new Uint8Array(DOM2_PREFIX.length + 2 + context.length + data.length);
  out.set(DOM2_PREFIX, 0);
  out[DOM2_PREFIX.length] = phflag ? 1 : 0;
  out[DOM2_PREFIX.length + 1] = context.length;
  out.set(context, DOM2_PREFIX.length + 2);
  out.set(data, DOM2_PREFIX.length + 2 + context.length);
  return out;
}

/** The secret scalar's clamping of RFC 8032 §5.1.5 step 2. */
function clamp(bytes: Uint8Array): Uint8Array {
  bytes[0]! &= 248;
  bytes[31]! &= 127;
  bytes[31]! |= 64;
  return bytes;
}

/** SHA-512, EdDSA's H over edwards25519 (node:crypto's OpenSSL). */
const sha512 = Object.assign((message: Uint8Array) => new Uint8Array(createHash('sha512').update(message).digest()), { outputLen: SHA512_BYTES });

/** Ed25519ph whose message is already PH(M) = SHA-512(M): the identity stands in for the prehash. */
const ed25519phOfDigest = eddsa(ed25519.Point, sha512, { adjustScalarBytes: clamp, domain: dom2, prehash: (digest: Uint8Array) => digest });

/**
 * The variant a sign or verify item asks for, or a 400 naming what does not fit: Ed25519ph needs
 * both prehashed=true and hash_algorithm=sha2-512; an Ed25519ctx context is not empty.
 */
export function ed25519Variant(options: VariantOptions, signatureContext: Uint8Array | undefined): Ed25519Variant {
  const context = signatureContext ?? new Uint8Array(0);
  if (context.length > MAX_CONTEXT) throw new BadRequestError(`signature_context has ${context.length} bytes; Ed25519 contexts have at most ${MAX_CONTEXT}`);
  if (options.prehashed) {
    if (options.hash !== 'sha2-512') {
      throw new BadRequestError(`hash_algorithm must be sha2-512 for prehashed ed25519 input (Ed25519ph signs a SHA-512 digest), got ${options.hash}`);
    }
    return { kind: 'ph', context };
  }
  if (options.hash === 'sha2-512') throw new BadRequestError('hash_algorithm=sha2-512 selects Ed25519ph for ed25519 keys, which needs prehashed=true and the SHA-512 digest as input');
  return context.length > 0 ? { kind: 'ctx', context } : PURE;
}

/** Whether a variant is one node:crypto cannot sign (Ed25519ctx or Ed25519ph). */
export function isContextVariant(variant: Ed25519Variant): variant is Exclude<Ed25519Variant, { kind: 'pure' }> {
  return variant.kind !== 'pure';
}

/** An Ed25519ctx or Ed25519ph signature of `input` with an Ed25519 private key. */
export function signEd25519Variant(privateKey: KeyObject, input: Uint8Array, variant: Exclude<Ed25519Variant, { kind: 'pure' }>): Buffer {
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  try {
    if (variant.kind === 'ctx') return Buffer.from(ed25519ctx.sign(input, seed, { context: variant.context }));
    checkDigest(input);
    return Buffer.from(ed25519phOfDigest.sign(input, seed, { context: variant.context }));
  } finally {
    seed.fill(0);
  }
}

/** Whether `signature` is an Ed25519ctx or Ed25519ph signature of `input` (RFC 8032's checks, not ZIP-215's). */
export function verifyEd25519Variant(publicKey: KeyObject, input: Uint8Array, signature: Uint8Array, variant: Exclude<Ed25519Variant, { kind: 'pure' }>): boolean {
  if (signature.length !== 64) return false;
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  if (variant.kind === 'ctx') return ed25519ctx.verify(signature, input, raw, { context: variant.context, zip215: false });
  checkDigest(input);
  return ed25519phOfDigest.verify(signature, input, raw, { context: variant.context, zip215: false });
}

function checkDigest(input: Uint8Array): void {
  if (input.length !== SHA512_BYTES) throw new BadRequestError(`prehashed input must be a ${SHA512_BYTES}-byte sha2-512 digest for Ed25519ph, got ${input.length} bytes`);
}
