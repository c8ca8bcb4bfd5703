/**
 * `keywarden/sdk/crypto`: the WASM crypto core and what a plugin needs to answer bulk crypto
 * requests quickly — a sub-path of the SDK (`keywarden/sdk`), which stays what every plugin
 * author needs. The transit engine is written against it; so may any plugin be.
 *
 * - **The WASM crypto core** ({@link WasmCrypto}): its type, and its hash and HMAC algorithm
 *   names. A plugin gets the server's loaded core from its context,
 *   `context.services.get(SERVICES.WasmCrypto)`; an isolated plugin's process loads its own.
 * - **Bytes without copies**: {@link bufferView} (a Buffer over the same memory) and
 *   {@link encodeRuns} (base64 of many runs into one string); {@link releaseBuffer} gives a
 *   buffer of megabytes back as soon as its owner is done with it.
 * - **Answers written as text**: {@link JsonText}, a part of a response whose JSON its plugin
 *   wrote itself (a batch's thousand results), and the strict base64 table {@link BASE64_INVALID}.
 * - **Ready-made tool paths**: hashing and random bytes, as the sys backend serves them under
 *   `sys/tools/`.
 *
 * @packageDocumentation
 */
export { WasmCrypto, bufferView, encodeRuns, type HashAlgorithm, type HmacAlgorithm } from '../wasm/index.js';
export { JsonText } from '../core/framework/json-text.js';
export { BASE64_INVALID, decodeBase64Chunks, decodeBase64InTurns, encodeBase64InTurns, isLongText } from '../core/tools/base64.js';
export { AsciiText, AsciiTextBuilder } from '../core/large-text.js';
export { RELEASE_BYTES, releaseBuffer } from '../core/buffer-release.js';
export { HASH_ALGORITHMS, hashToolPath, type HashAlgorithmName, type NodeHashName } from '../core/tools/hash.js';
export { randomToolPaths } from '../core/tools/random.js';
