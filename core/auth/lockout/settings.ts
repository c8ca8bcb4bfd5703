/**
 * User lockout settings (https://developer.hashicorp.com/vault/docs/concepts/user-lockout): how
 * many failed logins lock a user out, for how long, when the count starts again, and whether the
 * mount has lockout at all. A mount's settings come from its tune (`user_lockout_config`), then the
 * configuration file's `user_lockout` stanza for its type, then the stanza for "all", then Vault's
 * defaults, field by field.
 */
import { BadRequestError } from '../../errors.js';
import { CoercionError, parseBool, parseDurationSeconds } from '../../framework/fields.js';

export interface LockoutSettings {
  /** Failed logins within `counterReset` of each other that lock the user out. */
  readonly threshold: number;
  /** Seconds a locked user stays locked after the last failed login. */
  readonly duration: number;
  /** Seconds without a failed login after which the count starts again. */
  readonly counterReset: number;
  readonly disabled: boolean;
}

/** Vault's defaults: 5 failures, locked for 15 minutes, the count reset after 15 minutes. */
export const DEFAULT_USER_LOCKOUT: LockoutSettings = { threshold: 5, duration: 900, counterReset: 900, disabled: false };

/**
 * The configuration file's `user_lockout "<type>" { … }` stanzas, by auth method type ("all":
 * every type); a stanza sets only the fields it names.
 */
export type UserLockoutStanzas = Readonly<Record<string, Partial<LockoutSettings>>>;

/** The types a stanza may name, as in Vault (ldap is served by no plugin here, but a stanza for it is harmless). */
export const USER_LOCKOUT_STANZA_TYPES = ['all', 'userpass', 'approle', 'ldap'] as const;

/**
 * A mount's tune, as stored in its config and shown by sys/auth: a zero (or false) field is not
 * set and comes from the configuration file, as in Vault.
 */
export interface MountLockoutConfig {
  readonly lockout_threshold: number;
  readonly lockout_duration: number;
  readonly lockout_counter_reset: number;
  readonly lockout_disable: boolean;
}

/** The settings of a mount of `type` with the tune `tune`. */
export function effectiveLockout(type: string, stanzas: UserLockoutStanzas, tune: MountLockoutConfig | undefined): LockoutSettings {
  const fromFile = { ...DEFAULT_USER_LOCKOUT, ...stanzas.all, ...(type !== 'all' ? stanzas[type] : undefined) };
  if (!tune) return fromFile;
  return {
    threshold: tune.lockout_threshold || fromFile.threshold,
    duration: tune.lockout_duration || fromFile.duration,
    counterReset: tune.lockout_counter_reset || fromFile.counterReset,
    // The tune can turn lockout off, never back on over the file's disable_lockout (as in Vault).
    disabled: tune.lockout_disable || fromFile.disabled,
  };
}

/**
 * The keys of `user_lockout_config` on tune: Vault's API names, and `lockout_counter_reset`, the
 * name Vault's documentation gives the counter reset (its API reads `lockout_counter_reset_duration`).
 */
const TUNE_KEYS = ['lockout_threshold', 'lockout_duration', 'lockout_counter_reset_duration', 'lockout_counter_reset', 'lockout_disable'] as const;

/**
 * A tune's `user_lockout_config` applied over the mount's current one. Durations take "system"
 * (back to the configuration file's value) as in Vault; "" and null leave a field as it is.
 * @throws BadRequestError naming the key and the problem.
 */
export function parseLockoutTune(raw: Readonly<Record<string, unknown>>, current: MountLockoutConfig | undefined): MountLockoutConfig {
  for (const key of Object.keys(raw)) {
    if (!(TUNE_KEYS as readonly string[]).includes(key)) {
      throw new BadRequestError(`user_lockout_config: unknown key "${key}"; expected one of lockout_threshold, lockout_duration, lockout_counter_reset_duration, lockout_disable`);
    }
  }
  if (raw.lockout_counter_reset !== undefined && raw.lockout_counter_reset_duration !== undefined) {
    throw new BadRequestError('user_lockout_config: lockout_counter_reset and lockout_counter_reset_duration are the same setting: set one');
  }
  const next = { lockout_threshold: 0, lockout_duration: 0, lockout_counter_reset: 0, lockout_disable: false, ...current };
  const given = (value: unknown) => value !== undefined && value !== null && value !== '';
  try {
    if (given(raw.lockout_threshold)) next.lockout_threshold = threshold(raw.lockout_threshold);
    if (given(raw.lockout_duration)) next.lockout_duration = duration(raw.lockout_duration, 'lockout_duration');
    const resetKey = raw.lockout_counter_reset !== undefined ? 'lockout_counter_reset' : 'lockout_counter_reset_duration';
    if (given(raw[resetKey])) next.lockout_counter_reset = duration(raw[resetKey], resetKey);
    if (given(raw.lockout_disable)) next.lockout_disable = parseBool(raw.lockout_disable);
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`user_lockout_config: ${err.message}`);
    throw err;
  }
  return next;
}

/** The tune as sys/auth lists it in a mount's config and the tune read shows it, with Vault's names. */
export function lockoutTuneInfo(config: MountLockoutConfig): Record<string, unknown> {
  return {
    user_lockout_counter_reset_duration: config.lockout_counter_reset,
    user_lockout_threshold: config.lockout_threshold,
    user_lockout_duration: config.lockout_duration,
    user_lockout_disable: config.lockout_disable,
  };
}

function threshold(raw: unknown): number {
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^\d{1,9}$/.test(text.trim())) {
    throw new CoercionError(`lockout_threshold: expected a whole number of failed logins, got ${JSON.stringify(raw)}`);
  }
  return Number(text.trim());
}

function duration(raw: unknown, key: string): number {
  if (raw === 'system') return 0;
  try {
    return parseDurationSeconds(raw);
  } catch (err) {
    if (err instanceof CoercionError) throw new CoercionError(`${key}: ${err.message}`);
    throw err;
  }
}
