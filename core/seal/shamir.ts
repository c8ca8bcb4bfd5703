import { randomBytes, randomInt } from 'node:crypto';
import { BadRequestError } from '../errors.js';

/**
 * Shamir's secret sharing over GF(2^8) with the AES polynomial x^8+x^4+x^3+x+1 (0x11B), in the
 * share format Vault and OpenBao use: `[y_0 … y_{len-1}, x]` — one y per secret byte, then the x
 * coordinate. Shares made by either interoperate with ours.
 *
 * Field arithmetic runs on secret bytes, so it has no secret-dependent branches or table lookups:
 * a log/exp table indexed by a key byte leaks that byte through the cache.
 */

/** Most shares a split can make: x ranges over the 255 non-zero field elements. */
const MAX_PARTS = 255;

/** Carry-less multiply mod 0x11B, eight fixed rounds, every choice made with masks. */
function mul(a: number, b: number): number {
  let product = 0;
  for (let i = 0; i < 8; i++) {
    product ^= -(b & 1) & a;
    b >>= 1;
    const carry = -((a >> 7) & 1);
    a = ((a << 1) ^ (carry & 0x1b)) & 0xff;
  }
  return product & 0xff;
}

/** a^254 = a^-1 (Fermat: a^255 = 1); maps 0 to 0 without a branch. */
function inverse(a: number): number {
  // 254 = 0b11111110: multiply together a^2, a^4, … a^128.
  let square = mul(a, a);
  let result = square;
  for (let i = 0; i < 6; i++) {
    square = mul(square, square);
    result = mul(result, square);
  }
  return result;
}

/**
 * Splits `secret` into `parts` shares, any `threshold` of which recover it. Each share is
 * `secret.length + 1` bytes. x coordinates are a random subset of 1..255, so shares carry no
 * order that hints at how many were made.
 * @throws BadRequestError unless 2 ≤ threshold ≤ parts ≤ 255 and the secret is non-empty.
 */
export function split(secret: Uint8Array, parts: number, threshold: number): Uint8Array[] {
  if (!Number.isInteger(parts) || !Number.isInteger(threshold)) {
    throw new BadRequestError('parts and threshold must be integers');
  }
  if (parts < threshold) throw new BadRequestError('parts cannot be less than threshold');
  if (parts > MAX_PARTS) throw new BadRequestError(`parts cannot exceed ${MAX_PARTS}`);
  if (threshold < 2) throw new BadRequestError('threshold must be at least 2');
  if (secret.length === 0) throw new BadRequestError('cannot split an empty secret');

  const xs = randomXCoordinates(parts);
  const shares = xs.map((x) => {
    const share = new Uint8Array(secret.length + 1);
    share[secret.length] = x;
    return share;
  });

  // coefficients[1..threshold-1] are fresh random bytes for each secret byte; [0] is the byte.
  const coefficients = new Uint8Array(threshold);
  try {
    for (let i = 0; i < secret.length; i++) {
      coefficients[0] = secret[i]!;
      const random = randomBytes(threshold - 1);
      coefficients.set(random, 1);
      random.fill(0);
      for (let p = 0; p < parts; p++) shares[p]![i] = evaluate(coefficients, xs[p]!);
    }
  } finally {
    coefficients.fill(0);
  }
  return shares;
}

/**
 * Recovers the secret from at least `threshold` shares (fewer give a wrong value, not an error:
 * the shares alone cannot tell). Order does not matter.
 * @throws BadRequestError for fewer than two shares, unequal or too-short shares, or a repeated x.
 */
export function combine(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length < 2) throw new BadRequestError('less than two parts cannot be used to reconstruct the secret');
  const length = parts[0]!.length;
  if (length < 2) throw new BadRequestError('parts must be at least two bytes');
  if (parts.some((p) => p.length !== length)) throw new BadRequestError('all parts must be the same length');

  const xs = parts.map((p) => p[length - 1]!);
  if (new Set(xs).size !== xs.length) throw new BadRequestError('duplicate part detected');

  // Lagrange basis at 0 — basis_i = Π_{j≠i} x_j / (x_i ⊕ x_j) — depends only on the public x values.
  const basis = xs.map((xi, i) => {
    let value = 1;
    xs.forEach((xj, j) => {
      if (i !== j) value = mul(value, mul(xj, inverse(xi ^ xj)));
    });
    return value;
  });

  const secret = new Uint8Array(length - 1);
  for (let b = 0; b < secret.length; b++) {
    let value = 0;
    for (let i = 0; i < parts.length; i++) value ^= mul(parts[i]![b]!, basis[i]!);
    secret[b] = value;
  }
  return secret;
}

/** Horner's rule at `x`: a fixed number of field operations whatever the coefficients are. */
function evaluate(coefficients: Uint8Array, x: number): number {
  let value = 0;
  for (let i = coefficients.length - 1; i >= 0; i--) value = mul(value, x) ^ coefficients[i]!;
  return value;
}

/** The first `count` of a Fisher–Yates shuffle of 1..255. */
function randomXCoordinates(count: number): number[] {
  const xs = Array.from({ length: MAX_PARTS }, (_, i) => i + 1);
  for (let i = 0; i < count; i++) {
    const j = randomInt(i, MAX_PARTS);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs.slice(0, count);
}
