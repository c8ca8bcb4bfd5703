/**
 * Writing a new version of a version 2 secret, shared by write, patch and the upgrade from
 * version 1: the deletion time delete_version_after gives it, the check-and-set rule, and the
 * oldest versions max_versions drops.
 */
import { BadRequestError, afterDuration, type BatchOp } from '../../sdk/index.js';
import { DEFAULT_MAX_VERSIONS, putMetadata, putVersion, timestamp, versionKey, type KeyMetadata, type KvConfig } from './store.js';

/**
 * Vault's check-and-set: with `options.cas` the write happens only if it names the current version
 * (0: the secret must not exist yet); without it, only if neither the mount nor the key requires it.
 */
export function checkCas(options: Record<string, unknown> | undefined, config: KvConfig, meta: KeyMetadata): void {
  const raw = options?.cas;
  if (raw !== undefined && raw !== null && raw !== '') {
    const cas = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(cas) || cas < 0) throw new BadRequestError('error parsing check-and-set parameter');
    if (cas !== meta.currentVersion) throw new BadRequestError('check-and-set parameter did not match the current version');
  } else if (config.casRequired || meta.casRequired) {
    throw new BadRequestError('check-and-set parameter required for this call');
  }
}

/** The smallest non-zero delete_version_after of the mount and the key, in seconds; 0 when neither sets one. */
function deleteAfter(config: KvConfig, meta: KeyMetadata): number {
  const set = [config.deleteVersionAfter, meta.deleteVersionAfter].filter((s) => s > 0);
  return set.length === 0 ? 0 : Math.min(...set);
}

/**
 * Adds version current+1 to `meta` (changed in place) and returns the storage operations that
 * record it: the version's data, the metadata, and the deletion of every version max_versions
 * no longer keeps. The caller applies them in one batch.
 */
export function addVersion(path: string, meta: KeyMetadata, config: KvConfig, data: Record<string, unknown>, now: Date): BatchOp[] {
  const created = timestamp(now);
  const after = deleteAfter(config, meta);
  meta.currentVersion += 1;
  meta.updatedTime = created;
  meta.versions[String(meta.currentVersion)] = {
    createdTime: created,
    deletionTime: after > 0 ? timestamp(afterDuration(now, after)) : '',
    destroyed: false,
  };
  const ops: BatchOp[] = [putVersion(path, meta.currentVersion, data)];
  const max = meta.maxVersions || config.maxVersions || DEFAULT_MAX_VERSIONS;
  if (Object.keys(meta.versions).length > max) {
    const lastDropped = meta.currentVersion - max;
    for (let v = Math.max(meta.oldestVersion, 1); v <= lastDropped; v++) {
      delete meta.versions[String(v)];
      ops.push({ type: 'delete', key: versionKey(path, v) });
    }
    meta.oldestVersion = lastDropped + 1;
  }
  ops.push(putMetadata(path, meta));
  return ops;
}
