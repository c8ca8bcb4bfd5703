/** Makes the auto seals the `seal` stanzas describe, as one (seal-set.ts), at the server's start. */
import type { SealStanza } from '../config/settings.js';
import type { AutoSeal } from './auto-seal.js';
import type { UnsealLog } from './auto-unseal.js';
import { AwsKmsSeal } from './awskms-seal.js';
import { SealSet } from './seal-set.js';
import { StaticSeal } from './static-seal.js';
import { TransitSeal } from './transit-seal.js';

/**
 * The configured seals as one. With several, each seal reads its environment variables with
 * `_<name>` appended (VAULT_TOKEN_east), as Vault's Seal HA does
 * (https://developer.hashicorp.com/vault/docs/configuration/seal/seal-ha).
 * @throws ConfigError when what a stanza refers to (a key file, a variable, a token) is missing or wrong.
 */
export function createAutoSeal(stanzas: readonly SealStanza[], log: UnsealLog, env: NodeJS.ProcessEnv = process.env): SealSet {
  const made: AutoSeal[] = [];
  try {
    for (const stanza of stanzas) made.push(createOne(stanza, log, stanzas.length > 1 ? suffixed(env, stanza.name) : env));
  } catch (err) {
    for (const seal of made) seal.close();
    throw err;
  }
  return new SealSet(
    stanzas.map((stanza, i) => ({ name: stanza.name, priority: stanza.priority, disabled: stanza.disabled, seal: made[i]! })),
    log,
  );
}

function createOne(stanza: SealStanza, log: UnsealLog, env: NodeJS.ProcessEnv): AutoSeal {
  switch (stanza.type) {
    case 'static':
      return new StaticSeal(stanza, env);
    case 'transit':
      return new TransitSeal(stanza, log, env);
    case 'awskms':
      return new AwsKmsSeal(stanza, env);
  }
}

/** The variables that end in `_<name>`, under their names without it. */
function suffixed(env: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  const suffix = `_${name}`;
  const view: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) if (key.endsWith(suffix) && key.length > suffix.length) view[key.slice(0, -suffix.length)] = value;
  return view;
}
