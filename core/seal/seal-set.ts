/**
 * The configured seals as one (beyond Vault's open edition; the settings are Vault Enterprise's
 * Seal HA ones, https://developer.hashicorp.com/vault/docs/configuration/seal/seal-ha): the root
 * key is wrapped under every enabled seal and stored as a list, and any one seal that answers
 * opens it, tried by priority (lowest first). A seal that cannot wrap keeps the wrapping it made
 * before; one that has none yet (down at init, or newly added) wraps the root key at the first
 * start it answers. A disabled seal only opens: its wrapping is dropped at the next start, which is
 * how a store moves from one auto seal to another. With one seal and nothing disabled, the stored
 * form is that seal's own, as before several seals existed.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { IntegrityError, UnavailableError } from '../errors.js';
import { zeroize } from '../../storage/aead.js';
import type { AutoSeal, AutoSealType, WrappedKey } from './auto-seal.js';
import type { UnsealLog } from './auto-unseal.js';

/** The stored type of the list form; its `ciphertext` is the JSON list of each seal's wrapping. */
export const SEVERAL_SEALS = 'multiseal';

export interface SealMember {
  /** The stanza's `name` (its type when unset). */
  readonly name: string;
  readonly priority: number;
  readonly disabled: boolean;
  readonly seal: AutoSeal;
}

/** One seal's wrapping in the list form. */
interface Entry {
  readonly name?: string;
  readonly type: AutoSealType;
  readonly key_id: string;
  readonly ciphertext: string;
}

/** Each seal's health as last seen (`sys/seal-backend-status`). */
export interface SealBackend {
  readonly name: string;
  readonly type: AutoSealType;
  readonly disabled: boolean;
  readonly healthy: boolean;
  /** When it last went from answering to failing. */
  readonly unhealthySince?: Date;
  readonly error?: string;
}

export class SealSet implements AutoSeal {
  /** The enabled seal of lowest priority: what seal-status names (the first seal when every one is disabled). */
  readonly type: AutoSealType;
  /** False when every seal is disabled: they only open, while the store moves back to Shamir shares (migration.ts). */
  readonly enabled: boolean;
  private readonly members: readonly SealMember[];
  private readonly health = new Map<string, { since?: Date; error?: string }>();
  /** Whether the last wrap holds an entry made by every enabled seal. */
  private complete = true;

  constructor(
    members: readonly SealMember[],
    private readonly log: UnsealLog,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.members = [...members].sort((a, b) => a.priority - b.priority);
    const primary = this.members.find((m) => !m.disabled);
    if (this.members.length === 0) throw new Error('a seal set needs a seal');
    this.enabled = primary !== undefined;
    this.type = (primary ?? this.members[0]!).seal.type;
  }

  /** Each seal, by priority, with its health as last seen. */
  backends(): SealBackend[] {
    return this.members.map((m) => {
      const state = this.health.get(m.name);
      return {
        name: m.name,
        type: m.seal.type,
        disabled: m.disabled,
        healthy: state?.error === undefined,
        ...(state?.since ? { unhealthySince: state.since } : {}),
        ...(state?.error ? { error: state.error } : {}),
      };
    });
  }

  /** False when an enabled seal has no wrapping of its own in what was last wrapped. */
  get fullyWrapped(): boolean {
    return this.complete;
  }

  /**
   * Wraps under every enabled seal. A seal that fails keeps its entry from `previous` (the stored
   * wrapping) if it has one; the key id lists each seal's key, empty for a seal without an entry,
   * so that its first answer changes the id and the root key is wrapped again.
   * @throws UnavailableError when no enabled seal could wrap.
   */
  async wrap(plaintext: Buffer, aad: Buffer, previous?: WrappedKey): Promise<WrappedKey> {
    const enabled = this.members.filter((m) => !m.disabled);
    if (enabled.length === 1 && this.members.length === 1) return this.observe(enabled[0]!, () => enabled[0]!.seal.wrap(plaintext, aad));
    const kept = previous ? entriesOf(previous) : [];
    const entries: Entry[] = [];
    const ids: string[] = [];
    const failures: string[] = [];
    for (const member of enabled) {
      try {
        const made = await this.observe(member, () => member.seal.wrap(plaintext, aad));
        entries.push({ name: member.name, type: made.type as AutoSealType, key_id: made.key_id, ciphertext: made.ciphertext });
        ids.push(`${member.name}=${made.key_id}`);
      } catch (err) {
        failures.push(`${member.name}: ${messageOf(err)}`);
        const old = kept.find((entry) => matches(entry, member));
        if (old) entries.push({ ...old, name: member.name });
        ids.push(`${member.name}=${old ? old.key_id : ''}`);
      }
    }
    if (failures.length === enabled.length && entries.length === 0) throw new UnavailableError(`no seal could wrap the root key (${failures.join('; ')})`);
    this.complete = ids.every((id) => !id.endsWith('='));
    if (failures.length > 0) this.log.warn({ seals: failures }, 'seal: a seal could not wrap the root key; the others hold it, and it is wrapped again when that seal answers at a start');
    return { type: SEVERAL_SEALS, key_id: ids.join(' '), ciphertext: JSON.stringify(entries) };
  }

  /**
   * Opens the root key with the first seal, by priority, whose wrapping is stored and that answers.
   * @throws UnavailableError when every seal that could open it is unreachable; IntegrityError when
   * none of the configured seals has a stored wrapping, or none opens it.
   */
  async unwrap(wrapped: WrappedKey, aad: Buffer): Promise<Buffer> {
    const entries = entriesOf(wrapped);
    const failures: string[] = [];
    let unreachable = false;
    for (const member of this.members) {
      for (const entry of entries.filter((e) => matches(e, member))) {
        try {
          return await this.observe(member, () => member.seal.unwrap({ type: entry.type, key_id: entry.key_id, ciphertext: entry.ciphertext }, aad));
        } catch (err) {
          if (!(err instanceof IntegrityError)) unreachable = true;
          failures.push(this.members.length > 1 ? `seal "${member.name}": ${messageOf(err)}` : messageOf(err));
        }
      }
    }
    if (failures.length === 0) {
      const holders = entries.map((e) => (e.name ? `"${e.name}" (${e.type})` : `the ${e.type} seal`)).join(', ');
      throw new IntegrityError(
        `the root key is wrapped by ${holders}, which the configuration does not have: keep that seal's stanza beside the new one (with disabled = "true" to move off it) until the node has started once`,
      );
    }
    const reason = failures.join('; ');
    throw unreachable ? new UnavailableError(reason) : new IntegrityError(reason);
  }

  /**
   * The health check (seal-health.ts): every seal encrypts and decrypts a random payload, and its
   * health is recorded; a seal that cannot open what it just made counts as down. Answers whether
   * a seal that was down answers again.
   */
  async checkHealth(): Promise<{ readonly recovered: boolean }> {
    let recovered = false;
    const failures: string[] = [];
    const aad = Buffer.from('seal health check', 'utf8');
    for (const member of this.members) {
      const wasDown = this.health.get(member.name)?.error !== undefined;
      const payload = randomBytes(32);
      try {
        await this.observe(member, async () => {
          let opened: Buffer;
          try {
            opened = await member.seal.unwrap(await member.seal.wrap(payload, aad), aad);
          } catch (err) {
            if (err instanceof IntegrityError) throw new UnavailableError(`it cannot open what it wrapped: ${err.message}`);
            throw err;
          }
          const same = opened.length === payload.length && timingSafeEqual(opened, payload);
          zeroize(opened);
          if (!same) throw new UnavailableError('it opened something else than what it wrapped');
        });
        if (wasDown) recovered = true;
      } catch (err) {
        failures.push(`${member.name}: ${messageOf(err)}`);
      }
    }
    // Early, while the node still runs: the seal is needed at the next start.
    if (failures.length > 0) this.log.warn({ seals: failures }, 'seal health check: a seal does not answer; fix it before the node next needs it to unseal');
    return { recovered };
  }

  close(): void {
    for (const member of this.members) member.seal.close();
  }

  /** Runs one call to a seal and records whether it answered; a refusal to open counts as an answer. */
  private async observe<T>(member: SealMember, call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      this.health.delete(member.name);
      return result;
    } catch (err) {
      if (err instanceof IntegrityError) {
        this.health.delete(member.name);
      } else {
        const since = this.health.get(member.name)?.since ?? this.now();
        this.health.set(member.name, { since, error: messageOf(err) });
      }
      throw err;
    }
  }
}

/** The stored wrapping as a list: the list form's entries, or the one seal's own form. */
function entriesOf(wrapped: WrappedKey): Entry[] {
  if (wrapped.type !== SEVERAL_SEALS) return [{ type: wrapped.type, key_id: wrapped.key_id, ciphertext: wrapped.ciphertext }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(wrapped.ciphertext);
  } catch {
    parsed = undefined;
  }
  const valid = (e: Partial<Entry> | null): boolean =>
    typeof e?.type === 'string' && typeof e.key_id === 'string' && typeof e.ciphertext === 'string' && (e.name === undefined || typeof e.name === 'string');
  if (!Array.isArray(parsed) || !parsed.every((e) => valid(e as Partial<Entry> | null))) throw new IntegrityError('the stored wrapped root key is malformed');
  return parsed as Entry[];
}

/** An entry is a seal's when names and types agree; one stored by a lone seal has no name and goes by its type. */
function matches(entry: Entry, member: SealMember): boolean {
  return entry.type === member.seal.type && (entry.name === undefined || entry.name === member.name);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
