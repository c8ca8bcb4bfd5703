/**
 * Keywarden's HTTP layer with nothing behind it, on 127.0.0.1 (port printed on stdout): the real
 * koa app, router, LIST-verb wrapper, body reading and Vault envelope (core/http), in front of a
 * host that answers every request at once with an encrypt-shaped response. Beside the bare koa
 * echo it shows what the HTTP layer alone costs a single-item request, before any of the
 * pipeline (token, ACL, routing, validation, crypto, audit) runs.
 */
import { pino } from 'pino';
import { createApp, type AppHost } from '../../core/http/app.js';
import { listen } from '../../core/http/listener.js';
import type { BodyAllowance, HostRequest, HostResponse } from '../../core/host.js';

const CORS_OFF = { enabled: false, allowedOrigins: [], allowedHeaders: [] };

const answering: AppHost = {
  // No path of this host takes a binary body (the real host asks its sys backend: a prefix check).
  takesBinaryBody: () => false,
  // Every request is read as one with a usable token (the real host's answer for a cached token).
  bodyAllowance: (): BodyAllowance => 'authenticated',
  // CORS off, as the real host's setting is by default.
  cors: { cached: () => CORS_OFF, get: async () => CORS_OFF },
  async handle(req: HostRequest): Promise<HostResponse> {
    const plaintext = (req.body as { plaintext?: string } | undefined)?.plaintext ?? '';
    return {
      status: 200,
      body: { request_id: 'bench', lease_id: '', renewable: false, lease_duration: 0, data: { ciphertext: `vault:v1:${plaintext}`, key_version: 1 }, wrap_info: null, warnings: null, auth: null },
    };
  },
};

const listener = await listen(createApp(answering, { logger: pino({ level: 'silent' }) }), { host: '127.0.0.1', port: 0 });
process.stdout.write(`${listener.port}\n`);
process.on('SIGTERM', () => void listener.close().then(() => process.exit(0)));
