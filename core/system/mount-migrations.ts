/**
 * The mount moves (`sys/remount`) this node has made, by migration id, for `sys/remount/status`.
 * Kept in memory only, as Vault keeps them: a restart or a new active node forgets them.
 */
import { randomUUID } from 'node:crypto';

/** One move as `sys/remount/status/:migration_id` reports it (Vault's field names). */
export interface MountMigration {
  readonly source_mount: string;
  readonly target_mount: string;
  /** Vault's states; a move here finishes within its request, so only `success` is ever stored. */
  readonly status: 'in-progress' | 'success' | 'failure';
}

/** How many moves are remembered; the oldest are forgotten first, so the record cannot grow without bound. */
const KEEP = 1000;

export class MountMigrations {
  private readonly byId = new Map<string, MountMigration>();

  /** Records a finished move; returns its migration id. */
  recordSuccess(source: string, target: string): string {
    const id = randomUUID();
    this.byId.set(id, { source_mount: source, target_mount: target, status: 'success' });
    if (this.byId.size > KEEP) this.byId.delete(this.byId.keys().next().value!);
    return id;
  }

  get(id: string): MountMigration | undefined {
    return this.byId.get(id);
  }
}
