/** Makes the auto seal a `seal` stanza describes, at the server's start. */
import type { SealStanza } from '../config/settings.js';
import type { AutoSeal } from './auto-seal.js';
import type { UnsealLog } from './auto-unseal.js';
import { AwsKmsSeal } from './awskms-seal.js';
import { StaticSeal } from './static-seal.js';
import { TransitSeal } from './transit-seal.js';

/** @throws ConfigError when what the stanza refers to (a key file, a variable, a token) is missing or wrong. */
export function createAutoSeal(stanza: SealStanza, log: UnsealLog, env: NodeJS.ProcessEnv = process.env): AutoSeal {
  switch (stanza.type) {
    case 'static':
      return new StaticSeal(stanza, env);
    case 'transit':
      return new TransitSeal(stanza, log, env);
    case 'awskms':
      return new AwsKmsSeal(stanza, env);
  }
}
