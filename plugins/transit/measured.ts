/**
 * Transit's share of the server's metrics: each crypto operation request (encrypt, decrypt,
 * rewrap, datakey, hmac, sign, verify, hash, random) is counted by operation and key type, and its
 * batch size observed, once it has been answered. The key is read back from the key store's cache,
 * where the handler has just put it.
 */
import type { AnyPathDefinition, OperationMetrics, Operation } from '../../sdk/index.js';
import type { KeyStore } from './keys/key-store.js';

/** The writing operations: every transit crypto operation is a POST. */
const MEASURED: readonly Operation[] = ['update', 'create'];

export function measured(path: AnyPathDefinition, keys: KeyStore, metrics: OperationMetrics): AnyPathDefinition {
  const operation = path.pattern.split('/')[0]!;
  const operations = { ...path.operations };
  for (const name of MEASURED) {
    const spec = path.operations[name];
    if (!spec) continue;
    operations[name] = {
      ...spec,
      handler: async (req, input) => {
        const response = await spec.handler(req, input);
        // The handler has just put the key in the cache: reading it from there costs no await.
        const key = typeof input.name === 'string' ? (keys.cached(input.name) ?? (await keys.get(input.name))) : undefined;
        const batch: unknown = input.batch_input;
        metrics.transit(operation, key?.settings.type ?? 'none', Array.isArray(batch) ? batch.length : 1);
        return response;
      },
    };
  }
  return { ...path, operations };
}
