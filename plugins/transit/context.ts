/** What every transit path works with: the mount's keys, storage, the WASM core, time and logs. */
import type { Logger } from 'pino';
import type { Storage } from '../../storage/storage.js';
import type { Clock } from '../../core/clock.js';
import type { WasmCrypto } from '../../wasm/index.js';
import type { KeyStore } from './keys/key-store.js';

export interface TransitContext {
  readonly keys: KeyStore;
  readonly storage: Storage;
  readonly wasm: WasmCrypto;
  readonly clock: Clock;
  readonly logger: Logger;
}
