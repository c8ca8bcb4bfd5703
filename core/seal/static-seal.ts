/**
 * OpenBao's static seal (https://openbao.org/docs/configuration/seal/static/): AES-256-GCM under a
 * 32-byte key the operator provides beside the configuration. `previous_key` opens what the key
 * before it wrapped, so a rotated key re-wraps the root key at the next start.
 */
import { readFileSync } from 'node:fs';
import { IntegrityError } from '../errors.js';
import { ConfigError } from '../config/config-values.js';
import { decodeStaticKey } from '../config/seal-stanza.js';
import type { KeySource, StaticSealConfig } from '../config/settings.js';
import { gcmOpen, gcmSeal } from '../../storage/aead.js';
import type { AutoSeal, WrappedKey } from './auto-seal.js';

interface NamedKey {
  readonly id: string;
  readonly key: Buffer;
}

export class StaticSeal implements AutoSeal {
  readonly type = 'static';
  private readonly current: NamedKey;
  private readonly previous: NamedKey | undefined;

  /** @throws ConfigError when a key's variable or file is missing or does not hold a 32-byte key. */
  constructor(config: StaticSealConfig, env: NodeJS.ProcessEnv = process.env) {
    this.current = { id: config.currentKeyId, key: resolveKey(config.currentKey, 'current_key', env) };
    this.previous = config.previous && { id: config.previous.keyId, key: resolveKey(config.previous.key, 'previous_key', env) };
  }

  async wrap(plaintext: Buffer, aad: Buffer): Promise<WrappedKey> {
    return { type: 'static', key_id: this.current.id, ciphertext: gcmSeal(this.current.key, plaintext, aad).toString('base64') };
  }

  async unwrap(wrapped: WrappedKey, aad: Buffer): Promise<Buffer> {
    const key = [this.current, this.previous].find((k) => k?.id === wrapped.key_id);
    if (!key) {
      const known = [this.current, this.previous].filter((k) => k !== undefined).map((k) => `"${k.id}"`).join(' and ');
      throw new IntegrityError(`the root key is wrapped by static key "${wrapped.key_id}", but the seal stanza has only ${known}; set previous_key and previous_key_id to that key`);
    }
    try {
      return gcmOpen(key.key, Buffer.from(wrapped.ciphertext, 'base64'), aad);
    } catch (err) {
      if (err instanceof IntegrityError) throw new IntegrityError(`static key "${key.id}" does not open the stored root key: the key behind that id changed (an id must name one key for good)`);
      throw err;
    }
  }

  close(): void {
    this.current.key.fill(0);
    this.previous?.key.fill(0);
  }
}

function resolveKey(source: KeySource, field: string, env: NodeJS.ProcessEnv): Buffer {
  let text: string;
  let raw: Buffer | undefined;
  switch (source.kind) {
    case 'literal':
      text = source.value;
      break;
    case 'env': {
      const value = env[source.name];
      if (value === undefined || value === '') throw new ConfigError(`seal.static.${field}: the environment variable ${source.name} is not set`);
      text = value;
      break;
    }
    case 'file':
      try {
        raw = readFileSync(source.path);
      } catch (err) {
        throw new ConfigError(`seal.static.${field}: cannot read ${source.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      // `openssl rand -out FILE 32` writes the raw bytes; a file may hold hex or base64 text too.
      if (raw.length === 32) return raw;
      text = raw.toString('utf8');
      raw.fill(0);
      break;
  }
  const key = decodeStaticKey(text);
  if (!key) throw new ConfigError(`seal.static.${field}: must hold a 32-byte key (raw in a file, or base64 or hex)`);
  return key;
}
