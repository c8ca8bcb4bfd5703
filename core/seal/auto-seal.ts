/**
 * Auto seals: something outside the store (a static key, a transit server, AWS KMS) wraps the
 * root key, so a node unseals itself at start with nobody typing shares. One file per type
 * (static-seal.ts, transit-seal.ts, awskms-seal.ts); seal-manager.ts keeps the wrapped root key
 * and re-wraps it when the seal's key changed. What each type trusts: docs/deployment.md.
 */

export type AutoSealType = 'static' | 'transit' | 'awskms';

/** The root key as an auto seal wrapped it, stored as JSON outside the barrier. */
export interface WrappedKey {
  /** The seal's type, or `multiseal` for the list several seals wrap (seal-set.ts). */
  readonly type: AutoSealType | 'multiseal';
  /**
   * The seal's key that made `ciphertext` (static: current_key_id; transit: prefix, key name and
   * version; awskms: the key's ARN and its current key material). A new one at start means the seal's key was rotated.
   */
  readonly key_id: string;
  /**
   * Base64 (static), the transit server's `vault:vN:…` text, or (awskms) the KMS-encrypted data
   * key and the root key sealed under it, both base64, joined by ".".
   */
  readonly ciphertext: string;
}

export interface AutoSeal {
  readonly type: AutoSealType;
  /**
   * Wraps `plaintext` under the seal's current key. `aad` binds it to where it is stored where the
   * seal's cipher takes associated data (static, awskms's envelope); transit's API has none for its keys.
   * `previous`, the stored wrapping, is what several seals keep of a seal that cannot wrap now.
   * @throws UnavailableError when the seal cannot be reached or refuses.
   */
  wrap(plaintext: Buffer, aad: Buffer, previous?: WrappedKey): Promise<WrappedKey>;
  /**
   * Opens what `wrap` made, with the current key or (static) the previous one. The caller zeroizes it.
   * @throws UnavailableError when the seal cannot be reached; IntegrityError when no key it has opens `wrapped`.
   */
  unwrap(wrapped: WrappedKey, aad: Buffer): Promise<Buffer>;
  /** Stops background work (transit's token renewal). */
  close(): void;
}
