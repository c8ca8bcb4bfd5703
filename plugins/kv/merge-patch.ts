/**
 * JSON merge patch (RFC 7396), as Vault applies a PATCH to a secret or its custom metadata: an
 * object in the patch merges into the target key by key, `null` removes a key, anything else
 * replaces the value whole (arrays included).
 */
import { setOwn } from './store.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObject(target)) for (const [key, value] of Object.entries(target)) setOwn(out, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}
