/**
 * Vault's transit seal (https://developer.hashicorp.com/vault/docs/configuration/seal/transit): the
 * root key is encrypted and decrypted by a named key of a transit engine on another server (Vault,
 * OpenBao or Keywarden), over its HTTP API: `POST /v1/<mount_path>/encrypt/<key_name>` with the
 * plaintext as base64, ciphertext `vault:v<N>:…` back. The address comes from the configuration
 * file alone. The token is renewed with `auth/token/renew-self` at half its lease unless
 * `disable_renewal`.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { IntegrityError, UnavailableError } from '../errors.js';
import { ConfigError } from '../config/config-values.js';
import type { TransitSealConfig } from '../config/settings.js';
import type { AutoSeal, WrappedKey } from './auto-seal.js';
import type { UnsealLog } from './auto-unseal.js';

/** How long one call to the transit server may take. */
const REQUEST_TIMEOUT_MS = 15_000;
/** The most of a transit server's answer read: its answers to these calls are small. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** After a failed renewal, the next try. */
const RENEW_RETRY_MS = 60_000;

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export class TransitSeal implements AutoSeal {
  readonly type = 'transit';
  private readonly agent: http.Agent;
  private readonly token: string;
  private renewal: NodeJS.Timeout | undefined;
  private closed = false;

  /** @throws ConfigError without a token, or when a TLS file cannot be read. */
  constructor(
    private readonly config: TransitSealConfig,
    private readonly log: UnsealLog,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const token = config.token ?? env.VAULT_TOKEN;
    if (!token) throw new ConfigError('seal.transit.token: a token is required (token in the stanza, or VAULT_TOKEN)');
    this.token = token;
    const file = (name: string, where: string | undefined): Buffer | undefined => {
      if (!where) return undefined;
      try {
        return readFileSync(where);
      } catch (err) {
        throw new ConfigError(`seal.transit.${name}: cannot read ${where}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
    };
    const { tls } = config;
    this.agent = config.address.startsWith('https:')
      ? new https.Agent({
          keepAlive: false,
          ...(tls.caCert ? { ca: file('tls_ca_cert', tls.caCert) } : {}),
          ...(tls.clientCert ? { cert: file('tls_client_cert', tls.clientCert), key: file('tls_client_key', tls.clientKey) } : {}),
          ...(tls.serverName ? { servername: tls.serverName } : {}),
          rejectUnauthorized: !tls.skipVerify,
        })
      : new http.Agent({ keepAlive: false });
    if (!config.disableRenewal) void this.renew();
  }

  async wrap(plaintext: Buffer): Promise<WrappedKey> {
    const reply = await this.call(`${this.config.mountPath}/encrypt/${this.config.keyName}`, { plaintext: plaintext.toString('base64') });
    if (reply.status !== 200) throw this.refused('encrypt', reply);
    const ciphertext = (reply.body.data as { ciphertext?: unknown } | undefined)?.ciphertext;
    const version = typeof ciphertext === 'string' ? /^vault:(v\d+):/.exec(ciphertext)?.[1] : undefined;
    if (typeof ciphertext !== 'string' || !version) throw new UnavailableError(`transit seal: ${this.config.address} answered encrypt without a vault:v<N>: ciphertext`);
    return { type: 'transit', key_id: `${this.config.keyIdPrefix}${this.config.keyName}:${version}`, ciphertext };
  }

  async unwrap(wrapped: WrappedKey): Promise<Buffer> {
    const reply = await this.call(`${this.config.mountPath}/decrypt/${this.config.keyName}`, { ciphertext: wrapped.ciphertext });
    if (reply.status === 400) {
      throw new IntegrityError(`transit seal: the key "${this.config.keyName}" at ${this.config.address} does not decrypt the stored root key (${errorsOf(reply)})`);
    }
    if (reply.status !== 200) throw this.refused('decrypt', reply);
    const plaintext = (reply.body.data as { plaintext?: unknown } | undefined)?.plaintext;
    if (typeof plaintext !== 'string') throw new UnavailableError(`transit seal: ${this.config.address} answered decrypt without a plaintext`);
    return Buffer.from(plaintext, 'base64');
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.renewal);
    this.agent.destroy();
  }

  /** Renews the token, and schedules the next renewal at half the lease it got. */
  private async renew(): Promise<void> {
    let nextMs: number | undefined;
    try {
      const reply = await this.call('auth/token/renew-self', {});
      if (reply.status !== 200) throw this.refused('renew-self', reply);
      const auth = reply.body.auth as { lease_duration?: unknown; renewable?: unknown } | undefined;
      const lease = typeof auth?.lease_duration === 'number' ? auth.lease_duration : 0;
      // A token without a lease (a root token) never expires; one that is not renewable cannot be helped.
      if (auth?.renewable === true && lease > 0) nextMs = (lease * 1000) / 2;
      this.log.info({ lease_duration: lease }, 'transit seal: token renewed');
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'transit seal: the token could not be renewed; trying again later');
      nextMs = RENEW_RETRY_MS;
    }
    if (nextMs === undefined || this.closed) return;
    this.renewal = setTimeout(() => void this.renew(), nextMs);
    this.renewal.unref();
  }

  private refused(operation: string, reply: Reply): UnavailableError {
    return new UnavailableError(`transit seal: ${this.config.address} refused ${operation} with ${reply.status} (${errorsOf(reply)})`);
  }

  /** One POST to `/v1/<path>` with the token; an unreachable server is an UnavailableError. */
  private call(path: string, body: object): Promise<Reply> {
    const url = new URL(`${this.config.address}/v1/${path}`);
    const payload = Buffer.from(JSON.stringify(body), 'utf8');
    const send = url.protocol === 'https:' ? https.request : http.request;
    return new Promise<Reply>((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'POST',
          agent: this.agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: { 'content-type': 'application/json', 'content-length': payload.length, 'x-vault-token': this.token },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new Error('answer too large'));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = {};
            try {
              parsed = text ? JSON.parse(text) : {};
            } catch {
              parsed = {};
            }
            resolve({ status: res.statusCode ?? 0, body: parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {} });
          });
          res.on('error', (err) => reject(unreachable(this.config.address, err)));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => reject(unreachable(this.config.address, err)));
      req.end(payload);
    });
  }
}

function unreachable(address: string, err: Error): UnavailableError {
  return new UnavailableError(`transit seal: cannot reach ${address}: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
}

/** The server's `errors`, joined: what it said, never what was sent. */
function errorsOf(reply: Reply): string {
  const errors = reply.body.errors;
  return Array.isArray(errors) && errors.length > 0 ? errors.map(String).join('; ') : 'no error message';
}
