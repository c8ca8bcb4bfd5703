/**
 * The parameter sets of `ml-kem` keys and the HPKE suite of each KEM key, apart from crypto/kem.ts
 * so that the key policy and key versions can use them without importing the KEM code (which reads
 * policies and versions) back.
 */
import { BadRequestError } from '../../../sdk/index.js';
import type { KeyTypeInfo } from '../keys/key-types.js';
import { HPKE_AEADS, HPKE_KDFS, HPKE_KEMS, type HpkeKem, type HpkeSuite } from './hpke.js';

/** The parameter sets an `ml-kem` key may have; 768 is the default. */
export const ML_KEM_PARAMETER_SETS = ['768', '1024'] as const;
export const DEFAULT_ML_KEM_PARAMETER_SET = '768';

/**
 * The parameter set a new key of this type is made with: for `ml-kem` the one asked for (768 when
 * none is), for every other type none, and one asked for is refused.
 */
export function parameterSetFor(info: KeyTypeInfo, requested: string | undefined): string | undefined {
  if (info.name !== 'ml-kem') {
    // The post-quantum signing keys take one too (crypto/pq-signing.ts checks theirs).
    const signing = info.family === 'ml-dsa' || info.family === 'slh-dsa' || info.family === 'hybrid';
    if (!signing && requested !== undefined && requested !== '') {
      throw new BadRequestError(`parameter_set is not valid for key type ${info.name}: only ml-dsa, slh-dsa, hybrid and ml-kem keys take one`);
    }
    return undefined;
  }
  const set = requested === undefined || requested === '' ? DEFAULT_ML_KEM_PARAMETER_SET : requested;
  if (!(ML_KEM_PARAMETER_SETS as readonly string[]).includes(set)) {
    throw new BadRequestError(`invalid parameter_set ${set} for key type ml-kem: expected one of ${ML_KEM_PARAMETER_SETS.join(', ')}`);
  }
  return set;
}

/**
 * The HPKE suite of each KEM key. AES-256-GCM throughout, as draft-ietf-hpke-pq (section 6)
 * notes compliance regimes ask for beside post-quantum KEMs; HKDF-SHA-384 for ML-KEM-1024, the
 * pairing of that draft's category 5 suites, HKDF-SHA-256 for the others.
 */
const SUITES: Readonly<Record<string, HpkeSuite>> = {
  '768': { kem: HPKE_KEMS.mlKem768, kdf: HPKE_KDFS.hkdfSha256, aead: HPKE_AEADS.aes256Gcm },
  '1024': { kem: HPKE_KEMS.mlKem1024, kdf: HPKE_KDFS.hkdfSha384, aead: HPKE_AEADS.aes256Gcm },
  'mlkem768-x25519': { kem: HPKE_KEMS.mlKem768X25519, kdf: HPKE_KDFS.hkdfSha256, aead: HPKE_AEADS.aes256Gcm },
};

/** The HPKE suite of a KEM key type and parameter set. */
export function kemSuite(info: KeyTypeInfo, parameterSet: string | undefined): HpkeSuite {
  const suite = SUITES[info.name === 'ml-kem' ? (parameterSet ?? DEFAULT_ML_KEM_PARAMETER_SET) : info.name];
  if (!suite) throw new BadRequestError(`invalid parameter_set ${parameterSet ?? ''} for key type ${info.name}: expected one of ${ML_KEM_PARAMETER_SETS.join(', ')}`);
  return suite;
}

export function kemForKey(info: KeyTypeInfo, parameterSet: string | undefined): HpkeKem {
  return kemSuite(info, parameterSet).kem;
}
