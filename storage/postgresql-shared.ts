/**
 * What the PostgreSQL store (postgresql.ts) and its HA lock (postgresql-ha.ts) share: advisory lock
 * keys derived from a name, and a driver error described for a client.
 */
import { createHash } from 'node:crypto';

/** Two 32-bit advisory lock keys derived from a name (the `pg_advisory_lock(int, int)` form). */
export function lockKeys(name: string): [number, number] {
  const digest = createHash('sha256').update(name).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

/** A client may see it: names the cause (connection refused, timeout), not the SQL. */
export function reasonOf(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: unknown[] } | undefined;
  if (e?.code === 'ECONNREFUSED') return 'refused the connection (is the database running?)';
  if (e?.code === 'ECONNRESET' || e?.code === 'EPIPE') return 'closed the connection';
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return 'host name could not be resolved';
  if (e?.code === '57P01' || e?.code === '57P02' || e?.code === '57P03') return 'is shutting down or starting up';
  if (e?.code === '28P01' || e?.code === '28000') return 'refused the credentials';
  if (e?.code === '3D000') return 'has no such database';
  if (/timeout/i.test(e?.message ?? '')) return 'did not answer in time';
  if (e?.code === undefined && Array.isArray(e?.errors) && e!.errors.length > 0) return reasonOf(e!.errors[0]);
  return e?.code ? `error ${e.code}` : (e?.message ?? String(err));
}
