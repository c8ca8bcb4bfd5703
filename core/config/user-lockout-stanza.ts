/**
 * The configuration file's `user_lockout "<type>" { lockout_threshold, lockout_duration,
 * lockout_counter_reset, disable_lockout }` stanzas, Vault's server-wide user lockout settings
 * (https://developer.hashicorp.com/vault/docs/configuration/user-lockout), in HCL or in the JSON
 * form `"user_lockout": {"<type>": { … }}`. The type is "all" or an auth method type; a stanza
 * sets only the fields it names, the others come from the stanza for "all", then Vault's defaults
 * (core/auth/lockout/settings.ts). A mount's tune overrides them.
 */
import type { HclObject } from '../hcl.js';
import type { LockoutSettings } from '../auth/lockout/settings.js';
import { USER_LOCKOUT_STANZA_TYPES } from '../auth/lockout/settings.js';
import { blockBodies, boolean, durationSeconds, fail, fieldsOf, integer, whereOf, type Setting, type SourceFile } from './config-values.js';

const STANZA_KEYS = ['lockout_threshold', 'lockout_duration', 'lockout_counter_reset', 'disable_lockout'] as const;

export interface UserLockoutStanza {
  /** "all" or an auth method type. */
  readonly type: string;
  readonly settings: Partial<LockoutSettings>;
}

/** Every `user_lockout` stanza of one document, in order. */
export function readUserLockoutStanzas(doc: HclObject, source: SourceFile): Setting<UserLockoutStanza>[] {
  const stanzas: Setting<UserLockoutStanza>[] = [];
  const seen = new Map<string, number>();
  for (const item of doc.items.filter((candidate) => candidate.key === 'user_lockout')) {
    const where = whereOf(item, '', source);
    for (const byType of blockBodies(item.value, where)) {
      if (byType.items.length === 0) fail(where, 'expected a stanza such as user_lockout "all" { lockout_threshold = 5 }');
      for (const typed of byType.items) {
        const typeWhere = whereOf(typed, 'user_lockout.', source);
        const type = typed.key.toLowerCase();
        if (!(USER_LOCKOUT_STANZA_TYPES as readonly string[]).includes(type)) {
          fail(typeWhere, `unsupported auth type "${typed.key}"; expected one of ${USER_LOCKOUT_STANZA_TYPES.join(', ')} ("all" applies to every auth method)`);
        }
        const earlier = seen.get(type);
        if (earlier !== undefined) fail(typeWhere, `set twice in this file (first on line ${earlier})`);
        seen.set(type, typeWhere.line);
        for (const body of blockBodies(typed.value, typeWhere)) {
          const fields = fieldsOf(body.items, `user_lockout.${type}.`, source, STANZA_KEYS);
          const settings: { -readonly [K in keyof LockoutSettings]?: LockoutSettings[K] } = {};
          const threshold = fields.get('lockout_threshold');
          if (threshold) {
            settings.threshold = integer(threshold.value, threshold.where);
            if (settings.threshold < 0) fail(threshold.where, 'cannot be negative');
          }
          const duration = fields.get('lockout_duration');
          if (duration) settings.duration = durationSeconds(duration.value, duration.where);
          const reset = fields.get('lockout_counter_reset');
          if (reset) settings.counterReset = durationSeconds(reset.value, reset.where);
          const disable = fields.get('disable_lockout');
          if (disable) settings.disabled = boolean(disable.value, disable.where);
          stanzas.push({ value: { type, settings }, where: typeWhere });
        }
      }
    }
  }
  return stanzas;
}
