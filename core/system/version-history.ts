/**
 * The versions this cluster has run, as Vault's sys/version-history reports them: each version
 * with the time the active node first unsealed under it and the version before it, kept behind
 * the barrier.
 */
import type { Storage } from '../../storage/storage.js';

const PREFIX = 'core/versions/';

export interface VersionRecord {
  readonly version: string;
  /** RFC 3339. */
  readonly timestampInstalled: string;
  readonly previousVersion: string | null;
}

/** Every recorded version, oldest first. */
export async function versionHistory(storage: Storage): Promise<VersionRecord[]> {
  const out: VersionRecord[] = [];
  for (const key of await storage.list(PREFIX)) {
    const raw = await storage.get(PREFIX + key);
    if (raw) out.push(JSON.parse(Buffer.from(raw).toString('utf8')) as VersionRecord);
  }
  return out.sort((a, b) => a.timestampInstalled.localeCompare(b.timestampInstalled));
}

/** Records `version` the first time the active node unseals under it (a no-op afterwards). */
export async function recordVersion(storage: Storage, version: string, now: Date): Promise<void> {
  const key = PREFIX + encodeURIComponent(version);
  if (await storage.get(key)) return;
  const history = await versionHistory(storage);
  const record: VersionRecord = { version, timestampInstalled: now.toISOString(), previousVersion: history.at(-1)?.version ?? null };
  await storage.put(key, Buffer.from(JSON.stringify(record), 'utf8'));
}
