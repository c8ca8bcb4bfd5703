/**
 * The per-device salt and the HMAC made with it. Vault's salt is a random UUID string, and the
 * HMAC key is that string's bytes, so a value hashed here and by `sys/audit-hash` (or by Vault
 * with the same salt) compares equal.
 */
import { createHmac, randomUUID } from 'node:crypto';

/** What every hashed value starts with: it names the algorithm, as Vault's `GetIdentifiedHMAC` does. */
export const HMAC_PREFIX = 'hmac-sha256:';

/** A fresh salt for a new device. */
export function newSalt(): string {
  return randomUUID();
}

/** `hmac-sha256:` + hex(HMAC-SHA256(key = salt, message = value)). */
export function identifiedHmac(salt: string, value: string): string {
  return HMAC_PREFIX + createHmac('sha256', salt).update(value, 'utf8').digest('hex');
}
