/**
 * Public known-answer vectors for the WASM crypto core, copied from their sources:
 * FIPS 180-4 examples (NIST "Cryptographic Standards and Guidelines: Examples with Intermediate
 * Values", SHA-224/256/384/512), FIPS 202 examples (SHA3-224/256/384/512), RFC 4231 (HMAC-SHA-2),
 * RFC 5869 appendix A (HKDF-SHA-256), and AES-GCM vectors from the GCM specification's test cases
 * (McGrew & Viega, as reproduced in NIST's GCM validation material) and NIST CAVP gcmEncryptExtIV /
 * gcmDecrypt files.
 */

const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const ascii = (s: string): Buffer => Buffer.from(s, 'ascii');
const repeat = (byte: number, count: number): Buffer => Buffer.alloc(count, byte);
const range = (from: number, to: number): Buffer => Buffer.from(Array.from({ length: to - from + 1 }, (_, i) => from + i));

const ABC = ascii('abc');
const MSG448 = ascii('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq');
const MSG896 = ascii('abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu');

export interface HashVector {
  readonly alg: 'sha224' | 'sha256' | 'sha384' | 'sha512' | 'sha3-224' | 'sha3-256' | 'sha3-384' | 'sha3-512';
  readonly source: string;
  readonly input: Buffer;
  readonly digest: Buffer;
}

export const HASH_VECTORS: readonly HashVector[] = [
  { alg: 'sha224', source: 'FIPS 180-4 SHA-224 one block', input: ABC, digest: hex('23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7') },
  { alg: 'sha224', source: 'FIPS 180-4 SHA-224 two blocks', input: MSG448, digest: hex('75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525') },
  { alg: 'sha256', source: 'FIPS 180-4 SHA-256 one block', input: ABC, digest: hex('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad') },
  { alg: 'sha256', source: 'FIPS 180-4 SHA-256 two blocks', input: MSG448, digest: hex('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1') },
  { alg: 'sha256', source: 'FIPS 180-2 SHA-256 one million "a"', input: repeat(0x61, 1_000_000), digest: hex('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0') },
  { alg: 'sha384', source: 'FIPS 180-4 SHA-384 one block', input: ABC, digest: hex('cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7') },
  { alg: 'sha384', source: 'FIPS 180-4 SHA-384 two blocks', input: MSG896, digest: hex('09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039') },
  { alg: 'sha512', source: 'FIPS 180-4 SHA-512 one block', input: ABC, digest: hex('ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f') },
  { alg: 'sha512', source: 'FIPS 180-4 SHA-512 two blocks', input: MSG896, digest: hex('8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909') },
  { alg: 'sha3-224', source: 'FIPS 202 SHA3-224 empty', input: ascii(''), digest: hex('6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7') },
  { alg: 'sha3-224', source: 'FIPS 202 SHA3-224 "abc"', input: ABC, digest: hex('e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf') },
  { alg: 'sha3-256', source: 'FIPS 202 SHA3-256 empty', input: ascii(''), digest: hex('a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a') },
  { alg: 'sha3-256', source: 'FIPS 202 SHA3-256 "abc"', input: ABC, digest: hex('3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532') },
  { alg: 'sha3-256', source: 'FIPS 202 SHA3-256 448 bits', input: MSG448, digest: hex('41c0dba2a9d6240849100376a8235e2c82e1b9998a999e21db32dd97496d3376') },
  { alg: 'sha3-384', source: 'FIPS 202 SHA3-384 empty', input: ascii(''), digest: hex('0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2ac3713831264adb47fb6bd1e058d5f004') },
  { alg: 'sha3-384', source: 'FIPS 202 SHA3-384 "abc"', input: ABC, digest: hex('ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25') },
  { alg: 'sha3-512', source: 'FIPS 202 SHA3-512 empty', input: ascii(''), digest: hex('a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26') },
  { alg: 'sha3-512', source: 'FIPS 202 SHA3-512 "abc"', input: ABC, digest: hex('b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0') },
];

export interface HmacVector {
  readonly source: string;
  readonly key: Buffer;
  readonly data: Buffer;
  readonly sha256: Buffer;
  readonly sha384?: Buffer;
  readonly sha512?: Buffer;
}

/** RFC 4231 §4 test cases 1–4, 6 and 7 (case 5 tests truncation, which the API does not do). */
export const HMAC_VECTORS: readonly HmacVector[] = [
  {
    source: 'RFC 4231 test case 1',
    key: repeat(0x0b, 20),
    data: ascii('Hi There'),
    sha256: hex('b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'),
    sha384: hex('afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6'),
    sha512: hex('87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854'),
  },
  {
    source: 'RFC 4231 test case 2',
    key: ascii('Jefe'),
    data: ascii('what do ya want for nothing?'),
    sha256: hex('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'),
    sha384: hex('af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649'),
    sha512: hex('164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737'),
  },
  {
    source: 'RFC 4231 test case 3',
    key: repeat(0xaa, 20),
    data: repeat(0xdd, 50),
    sha256: hex('773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe'),
  },
  {
    source: 'RFC 4231 test case 4',
    key: range(0x01, 0x19),
    data: repeat(0xcd, 50),
    sha256: hex('82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b'),
  },
  {
    source: 'RFC 4231 test case 6 (key longer than a block)',
    key: repeat(0xaa, 131),
    data: ascii('Test Using Larger Than Block-Size Key - Hash Key First'),
    sha256: hex('60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54'),
    sha384: hex('4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952'),
    sha512: hex('80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598'),
  },
  {
    source: 'RFC 4231 test case 7 (key and data longer than a block)',
    key: repeat(0xaa, 131),
    data: ascii('This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.'),
    sha256: hex('9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2'),
  },
];

export interface HkdfVector {
  readonly source: string;
  readonly ikm: Buffer;
  readonly salt: Buffer;
  readonly info: Buffer;
  readonly okm: Buffer;
}

/** RFC 5869 appendix A, the SHA-256 cases A.1–A.3. */
export const HKDF_VECTORS: readonly HkdfVector[] = [
  {
    source: 'RFC 5869 A.1 basic',
    ikm: repeat(0x0b, 22),
    salt: range(0x00, 0x0c),
    info: range(0xf0, 0xf9),
    okm: hex('3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865'),
  },
  {
    source: 'RFC 5869 A.2 longer inputs and outputs',
    ikm: range(0x00, 0x4f),
    salt: range(0x60, 0xaf),
    info: range(0xb0, 0xff),
    okm: hex('b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87'),
  },
  {
    source: 'RFC 5869 A.3 empty salt and info',
    ikm: repeat(0x0b, 22),
    salt: Buffer.alloc(0),
    info: Buffer.alloc(0),
    okm: hex('8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8'),
  },
];

export interface GcmVector {
  readonly source: string;
  readonly key: Buffer;
  readonly nonce: Buffer;
  readonly plaintext: Buffer;
  readonly aad: Buffer;
  readonly ciphertext: Buffer;
  /** Full 16-byte tag, or a truncated CAVP tag (compare the prefix). */
  readonly tag: Buffer;
}

const GCM_P64 = hex('d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255');
const GCM_AAD20 = hex('feedfacedeadbeeffeedfacedeadbeefabaddad2');
const GCM_NONCE = hex('cafebabefacedbaddecaf888');
const ZERO12 = Buffer.alloc(12);
const EMPTY = Buffer.alloc(0);

export const GCM_VECTORS: readonly GcmVector[] = [
  { source: 'GCM spec test case 1 (AES-128, empty plaintext)', key: Buffer.alloc(16), nonce: ZERO12, plaintext: EMPTY, aad: EMPTY, ciphertext: EMPTY, tag: hex('58e2fccefa7e3061367f1d57a4e7455a') },
  { source: 'GCM spec test case 2 (AES-128, one block)', key: Buffer.alloc(16), nonce: ZERO12, plaintext: Buffer.alloc(16), aad: EMPTY, ciphertext: hex('0388dace60b6a392f328c2b971b2fe78'), tag: hex('ab6e47d42cec13bdf53a67b21257bddf') },
  {
    source: 'GCM spec test case 3 (AES-128, 64 bytes, no AAD)',
    key: hex('feffe9928665731c6d6a8f9467308308'),
    nonce: GCM_NONCE,
    plaintext: GCM_P64,
    aad: EMPTY,
    ciphertext: hex('42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985'),
    tag: hex('4d5c2af327cd64a62cf35abd2ba6fab4'),
  },
  {
    source: 'GCM spec test case 4 (AES-128, 60 bytes, 20 bytes AAD)',
    key: hex('feffe9928665731c6d6a8f9467308308'),
    nonce: GCM_NONCE,
    plaintext: GCM_P64.subarray(0, 60),
    aad: GCM_AAD20,
    ciphertext: hex('42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091'),
    tag: hex('5bc94fbc3221a5db94fae95ae7121a47'),
  },
  { source: 'GCM spec test case 13 (AES-256, empty plaintext)', key: Buffer.alloc(32), nonce: ZERO12, plaintext: EMPTY, aad: EMPTY, ciphertext: EMPTY, tag: hex('530f8afbc74536b9a963b4f1c4cb738b') },
  { source: 'GCM spec test case 14 (AES-256, one block)', key: Buffer.alloc(32), nonce: ZERO12, plaintext: Buffer.alloc(16), aad: EMPTY, ciphertext: hex('cea7403d4d606b6e074ec5d3baf39d18'), tag: hex('d0d1c8a799996bf0265b98b5d48ab919') },
  {
    source: 'GCM spec test case 15 (AES-256, 64 bytes, no AAD)',
    key: hex('feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308'),
    nonce: GCM_NONCE,
    plaintext: GCM_P64,
    aad: EMPTY,
    ciphertext: hex('522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad'),
    tag: hex('b094dac5d93471bdec1a502270e3cc6c'),
  },
  {
    source: 'GCM spec test case 16 (AES-256, 60 bytes, 20 bytes AAD)',
    key: hex('feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308'),
    nonce: GCM_NONCE,
    plaintext: GCM_P64.subarray(0, 60),
    aad: GCM_AAD20,
    ciphertext: hex('522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662'),
    tag: hex('76fc6ece0f4e1768cddf8853bb2d551b'),
  },
  {
    source: 'CAVP gcmEncryptExtIV256 Keylen=256 PTlen=0 AADlen=0 Count=0',
    key: hex('b52c505a37d78eda5dd34f20c22540ea1b58963cf8e5bf8ffa85f9f2492505b4'),
    nonce: hex('516c33929df5a3284ff463d7'),
    plaintext: EMPTY,
    aad: EMPTY,
    ciphertext: EMPTY,
    tag: hex('bdc1ac884d332457a1d2664f168c76f0'),
  },
  {
    source: 'CAVP gcmEncryptExtIV128 Keylen=128 PTlen=0 AADlen=0 Count=0',
    key: hex('11754cd72aec309bf52f7687212e8957'),
    nonce: hex('3c819d9a9bed087615030b65'),
    plaintext: EMPTY,
    aad: EMPTY,
    ciphertext: EMPTY,
    tag: hex('250327c674aaf477aef2675748cf6971'),
  },
  {
    source: 'CAVP gcmEncryptExtIV256 PTlen=128 AADlen=128 Taglen=120 Count=0',
    key: hex('7f7168a406e7c1ef0fd47ac922c5ec5f659765fb6aaa048f7056f6c6b5d8513d'),
    nonce: hex('b8b5e407adc0e293e3e7e991'),
    plaintext: hex('b706194bb0b10c474e1b2d7b2278224c'),
    aad: hex('ff7628f6427fbcef1f3b82b37404e116'),
    ciphertext: hex('8fada0b8e777a829ca9680d3bf4f3574'),
    tag: hex('daca354277f6335fc8bec90886da70'),
  },
  {
    source: 'CAVP gcmDecrypt128 PTlen=128 AADlen=128 Count=0',
    key: hex('816e39070410cf2184904da03ea5075a'),
    nonce: hex('32c367a3362613b27fc3e67e'),
    plaintext: hex('ecafe96c67a1646744f1c891f5e69427'),
    aad: hex('f2a30728ed874ee02983c294435d3c16'),
    ciphertext: hex('552ebe012e7bcf90fcef712f8344e8f1'),
    tag: hex('ecaae9fc68276a45ab0ca3cb9dd9539f'),
  },
];

/** CAVP gcmDecrypt128 PTlen=128 AADlen=128 Count=1: the expected result is FAIL. */
export const GCM_REJECT_VECTOR = {
  source: 'CAVP gcmDecrypt128 PTlen=128 AADlen=128 Count=1 (FAIL)',
  key: hex('867fc5d5476d5008f0703d81e3622255'),
  nonce: hex('22945529dff947c3c9264df7'),
  aad: hex('261a9efd4f32bc3d07c115b4edcf8adf'),
  ciphertext: hex('1c785025e5a2678e4b29b29276e395bb'),
  tag: hex('87fdf1261846164a950c37a3f2eea17d'),
} as const;
