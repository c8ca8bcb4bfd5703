/**
 * The physical store as the barrier sees it, with every operation timed into
 * `keywarden_storage_operation_duration_seconds` (failed operations too: a slow failure is what
 * an operator looks for).
 */
import type { BatchOp, PhysicalStorage, Storage } from '../../storage/storage.js';
import type { Metrics } from './metrics.js';

export function timedStorage(physical: PhysicalStorage, metrics: Metrics): Storage {
  const backend = physical.kind;
  const timed = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      metrics.storageOperation(backend, operation, (performance.now() - started) / 1000);
    }
  };
  return {
    get: (key: string) => timed('get', () => physical.get(key)),
    put: (key: string, value: Uint8Array) => timed('put', () => physical.put(key, value)),
    delete: (key: string) => timed('delete', () => physical.delete(key)),
    list: (prefix: string) => timed('list', () => physical.list(prefix)),
    batch: (ops: readonly BatchOp[]) => timed('batch', () => physical.batch(ops)),
  };
}
