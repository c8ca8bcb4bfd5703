/** Shared set-up of the WASM crypto tests: one loaded core per process, without the warm-up. */
import { WasmCrypto, type BatchPath, type CryptoPath } from '../../wasm/index.js';

let shared: Promise<WasmCrypto> | undefined;

export function loadCrypto(): Promise<WasmCrypto> {
  shared ??= WasmCrypto.load({ warmUp: false, arenaBytes: 4 * 1024 * 1024 });
  return shared;
}

/** The paths a primitive can be forced onto, plus `undefined` for normal dispatch. */
export function pathsOf(...batchPaths: BatchPath[]): readonly (CryptoPath | undefined)[] {
  return [...batchPaths, 'node', undefined];
}

export function pathName(path: CryptoPath | undefined): string {
  return path ?? 'dispatched';
}

/** Sizes the issue asks every primitive to be checked at. */
export const EDGE_SIZES = [0, 1, 15, 16, 17, 63, 64, 65, 4097] as const;
