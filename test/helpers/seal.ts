/** Servers with an auto seal for tests: a static seal with a fresh literal key, in-process. */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../core/server.js';
import type { StaticSealConfig } from '../../core/config/settings.js';
import { TestClient } from './http.js';
import { testConfig, type TestServerOptions } from './server.js';

export type AutoSealedServer = RunningServer & { client: TestClient; seal: StaticSealConfig };

/** A static seal stanza with a new random key (hex, as a literal `current_key`). */
export function staticSeal(): StaticSealConfig {
  return { type: 'static', currentKeyId: 'test-key', currentKey: { kind: 'literal', value: randomBytes(32).toString('hex') } };
}

/**
 * Starts a server with `seal` (a new static seal when omitted), `disabled` to move the store back
 * to Shamir shares; not initialized unless its storage is.
 */
export async function startAutoSealedServer(options: TestServerOptions & { seal?: StaticSealConfig; disabled?: boolean } = {}): Promise<AutoSealedServer> {
  const seal = options.seal ?? staticSeal();
  const stanza = { ...seal, name: seal.type, priority: 1, disabled: options.disabled ?? false };
  const server = await startServer({ config: { ...testConfig(options), seal: [stanza] }, logger: pino({ level: 'silent' }) });
  return Object.assign(server, { client: new TestClient(server.address), seal });
}

/** `sys/init` with recovery shares; the server unseals itself. Sets the client's token to the root token. */
export async function initWithRecovery(server: { client: TestClient }, shares: number, threshold: number): Promise<{ recoveryKeys: string[]; rootToken: string }> {
  const init = await server.client.put('sys/init', { recovery_shares: shares, recovery_threshold: threshold });
  expect(init.status, init.text).to.equal(200);
  server.client.token = init.body.root_token as string;
  return { recoveryKeys: (init.body.recovery_keys as string[] | undefined) ?? [], rootToken: init.body.root_token as string };
}
