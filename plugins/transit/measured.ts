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
      // Not an async function: the answer is the handler's own promise with the count chained on.
      handler: (req, input) =>
        spec.handler(req, input).then((response) => {
          const batch: unknown = input.batch_input;
          const items = Array.isArray(batch) ? batch.length : 1;
          if (typeof input.name !== 'string') {
            metrics.transit(operation, 'none', items);
            return response;
          }
          // The handler has just put the key in the cache: reading it from there costs no await.
          const cached = keys.cached(input.name);
          if (cached) {
            metrics.transit(operation, cached.settings.type, items);
            return response;
          }
          return keys.get(input.name).then((key) => {
            metrics.transit(operation, key?.settings.type ?? 'none', items);
            return response;
          });
        }),
    };
  }
  return { ...path, operations };
}
