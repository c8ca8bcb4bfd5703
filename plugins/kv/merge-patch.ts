/**
 * JSON merge patch (RFC 7396), as Vault applies a PATCH to a secret or its custom metadata: an
 * object in the patch merges into the target key by key, `null` removes a key, anything else
 * replaces the value whole (arrays included).
 */
import { isJsonObject, setOwn } from './store.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isJsonObject(target)) for (const [key, value] of Object.entries(target)) setOwn(out, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}
