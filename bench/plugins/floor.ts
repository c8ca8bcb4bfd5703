/**
 * Floors for the transit benchmarks, mounted in the real server so they pay exactly the same HTTP,
 * token, ACL and audit costs as transit itself:
 *   echo/:name   — parses the batch, base64-decodes and re-encodes each item, builds the JSON: no crypto
 *   echo-decrypt/:name — the same work shaped as a decrypt: decodes each `vault:v1:` ciphertext and
 *                  answers the bytes a plaintext would have (without nonce and tag) as `plaintext`
 *   naive/:name  — what a straightforward implementation does: per item createCipheriv with a
 *                  randomBytes nonce (AES-256-GCM), `vault:v1:` output
 *   naive-derived/:name — the same for a derived key: per item, the key from hkdfSync over the
 *                  item's context (HKDF-SHA-256, no salt, as transit derives), then as naive
 *   naive-decrypt/:name — per item createDecipheriv
 *   naive-cmac/:name — per item AES-CMAC built from node:crypto's AES (OpenSSL; Node has no CMAC):
 *                  the subkeys from one AES-ECB block, the MAC from AES-CBC (test/helpers/node-cmac.ts)
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { FrameworkBackend, definePath } from '../../core/framework/index.js';
import type { PluginManifest } from '../../core/plugins/plugin.js';
import { nodeCmac } from '../../test/helpers/node-cmac.js';

const KEY = randomBytes(32);
const NO_SALT = Buffer.alloc(0);

function naiveSeal(key: Uint8Array, plaintext: Buffer): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const out = Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `vault:v1:${out.toString('base64')}`;
}

function items(batch: Record<string, unknown>[] | undefined, field: string): Buffer[] {
  return (batch ?? []).map((item) => Buffer.from(textOf(item[field]), 'base64'));
}

/** A field's text; "" when it is absent or not a string. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

const manifest: PluginManifest = {
  name: 'bench-floor',
  kind: 'secret',
  version: '1.0.0',
  description: 'Benchmark floors (not for production).',
  factory: () =>
    new FrameworkBackend({
      description: 'benchmark floors',
      paths: [
        definePath({
          pattern: 'echo/:name',
          fields: {
            name: { type: 'string', description: 'Ignored.', required: true },
            batch_input: { type: 'object-list', description: 'Items with plaintext or ciphertext.' },
          },
          operations: {
            update: {
              summary: 'Echo the batch through base64 and JSON only.',
              handler: async (_req, input) => ({
                data: {
                  batch_results: (input.batch_input ?? []).map((item) => {
                    const text = textOf(item.plaintext ?? item.ciphertext);
                    const bytes = Buffer.from(text.startsWith('vault:v1:') ? text.slice(9) : text, 'base64');
                    return { ciphertext: `vault:v1:${bytes.toString('base64')}`, key_version: 1 };
                  }),
                },
              }),
            },
          },
          synopsis: 'No-crypto floor.',
          description: 'The same parsing and encoding work as a batch encrypt, without cryptography.',
        }),
        definePath({
          pattern: 'echo-decrypt/:name',
          fields: {
            name: { type: 'string', description: 'Ignored.', required: true },
            batch_input: { type: 'object-list', description: 'Items with ciphertext.' },
          },
          operations: {
            update: {
              summary: 'Echo a decrypt batch through base64 and JSON only.',
              handler: async (_req, input) => ({
                data: {
                  batch_results: (input.batch_input ?? []).map((item) => {
                    const raw = Buffer.from(textOf(item.ciphertext).slice('vault:v1:'.length), 'base64');
                    return { plaintext: raw.subarray(12, Math.max(12, raw.length - 16)).toString('base64') };
                  }),
                },
              }),
            },
          },
          synopsis: 'No-crypto decrypt floor.',
          description: 'The same parsing and encoding work as a batch decrypt, without cryptography.',
        }),
        definePath({
          pattern: 'naive/:name',
          fields: {
            name: { type: 'string', description: 'Ignored.', required: true },
            batch_input: { type: 'object-list', description: 'Items with plaintext.' },
          },
          operations: {
            update: {
              summary: 'Encrypt each item with its own createCipheriv call.',
              handler: async (_req, input) => ({
                data: {
                  batch_results: items(input.batch_input, 'plaintext').map((plaintext) => ({ ciphertext: naiveSeal(KEY, plaintext), key_version: 1 })),
                },
              }),
            },
          },
          synopsis: 'Naive per-item floor.',
          description: 'Per-item node:crypto AES-256-GCM.',
        }),
        definePath({
          pattern: 'naive-derived/:name',
          fields: {
            name: { type: 'string', description: 'Ignored.', required: true },
            batch_input: { type: 'object-list', description: 'Items with plaintext and context.' },
          },
          operations: {
            update: {
              summary: 'Derive a key per item with hkdfSync, then encrypt it with its own createCipheriv call.',
              handler: async (_req, input) => {
                const contexts = items(input.batch_input, 'context');
                return {
                  data: {
                    batch_results: items(input.batch_input, 'plaintext').map((plaintext, i) => {
                      const key = new Uint8Array(hkdfSync('sha256', KEY, NO_SALT, contexts[i]!, 32));
                      return { ciphertext: naiveSeal(key, plaintext), key_version: 1 };
                    }),
                  },
                };
              },
            },
          },
          synopsis: 'Naive per-item derived-key floor.',
          description: 'Per-item HKDF-SHA-256 (node:crypto hkdfSync) and AES-256-GCM.',
        }),
        definePath({
          pattern: 'naive-cmac/:name',
          fields: {
            name: { type: 'string', description: 'Ignored.', required: true },
            batch_input: { type: 'object-list', description: 'Items with input.' },
          },
          operations: {
            update: {
              summary: 'CMAC each item with node:crypto AES-ECB and AES-CBC calls.',
              handler: async (_req, input) => ({
                data: { batch_results: items(input.batch_input, 'input').map((data) => ({ cmac: `vault:v1:${nodeCmac(KEY, data).toString('base64')}`, reference: '' })) },
              }),
            },
          },
          synopsis: 'Naive per-item CMAC floor.',
          description: 'Per-item AES-256-CMAC from node:crypto AES-ECB (subkeys) and AES-CBC (the MAC).',
        }),
        definePath({
          pattern: 'naive-decrypt/:name',
          fields: {
            name: { type: 'string', description: 'Ignored.', required: true },
            batch_input: { type: 'object-list', description: 'Items with ciphertext.' },
          },
          operations: {
            update: {
              summary: 'Decrypt each item with its own createDecipheriv call.',
              handler: async (_req, input) => ({
                data: {
                  batch_results: (input.batch_input ?? []).map((item) => {
                    const raw = Buffer.from(String(item.ciphertext).slice('vault:v1:'.length), 'base64');
                    const decipher = createDecipheriv('aes-256-gcm', KEY, raw.subarray(0, 12));
                    decipher.setAuthTag(raw.subarray(raw.length - 16));
                    const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
                    return { plaintext: plain.toString('base64') };
                  }),
                },
              }),
            },
          },
          synopsis: 'Naive per-item decrypt floor.',
          description: 'Per-item node:crypto AES-256-GCM decryption.',
        }),
      ],
    }),
};

export default manifest;
