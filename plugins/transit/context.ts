/** What every transit path works with: the mount's keys, storage, the WASM core, time and logs. */
import type { Logger, Storage, Clock } from '../../sdk/index.js';
import type { WasmCrypto } from '../../sdk/crypto.js';
import type { KeyStore } from './keys/key-store.js';

export interface TransitContext {
  readonly keys: KeyStore;
  readonly storage: Storage;
  readonly wasm: WasmCrypto;
  readonly clock: Clock;
  readonly logger: Logger;
}
