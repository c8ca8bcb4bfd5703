/** The KEM interface HPKE's engines implement (crypto/hpke.ts, crypto/kem-node.ts), apart so neither imports the other back. */
/**
 * A KEM as HPKE sees it: private keys in their seed form (draft-ietf-hpke-pq, sections 3 and 4).
 * `K` is the engine's form of a private key ready to decapsulate.
 */
export interface HpkeKem<K = unknown> {
  readonly id: number;
  readonly name: string;
  /** Bytes of a private key (the seed), a public key and an encapsulated key. */
  readonly seedBytes: number;
  readonly publicKeyBytes: number;
  readonly encBytes: number;
  /** The public key of a private key's seed. */
  publicKeyOf(seed: Uint8Array): Uint8Array;
  /**
   * A fresh shared secret and its encapsulation to `publicKey`; `randomness` only for test
   * vectors, and only @noble takes it (node:crypto draws its own).
   */
  encap(publicKey: Uint8Array, randomness?: Uint8Array): { sharedSecret: Uint8Array; enc: Uint8Array };
  /** The private key in the form decap takes (for @noble's ML-KEM, the seed expanded); `forget` it after use. */
  decapsulationKeyOf(seed: Uint8Array): K;
  /** The shared secret in `enc` for a key from decapsulationKeyOf. */
  decap(enc: Uint8Array, decapsulationKey: K): Uint8Array;
  /** Wipes what of a key from decapsulationKeyOf is ours to wipe. */
  forget(decapsulationKey: K): void;
}

/** One engine's three KEMs. */
export interface KemSet {
  readonly mlKem768: HpkeKem;
  readonly mlKem1024: HpkeKem;
  readonly mlKem768X25519: HpkeKem;
}
