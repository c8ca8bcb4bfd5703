/**
 * First contact with a server: its start-up log says where it stands (uninitialized, sealed or
 * serving) and the command that takes it further, and where its web UI is; its sealed and
 * already-initialized answers keep Vault's words, which the vault CLI looks for, and add Keywarden's.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer } from '../../core/server.js';
import type { SealStanza } from '../../core/config/settings.js';
import { TestClient } from '../helpers/http.js';
import { startTestServer, tempDir, testConfig } from '../helpers/server.js';

interface LogLine {
  readonly msg: string;
  readonly state?: string;
  readonly next?: string;
  readonly seal?: string;
  readonly ui?: string;
}

/** A logger at the server's default level whose lines the test reads. */
function capturedLogger(): { logger: pino.Logger; lines: () => LogLine[] } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, sink),
    lines: () => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine),
  };
}

describe('first contact', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;

  before(async () => {
    dir = await tempDir('keywarden-first-contact-');
  });
  after(async () => {
    await dir.remove();
  });

  it('a new server logs that it is not initialized, the command to run with its address, and its web UI', async () => {
    const log = capturedLogger();
    const server = await startTestServer({ leveldbPath: dir.path, ui: true, logger: log.logger });
    try {
      const lines = log.lines();
      expect(lines.find((l) => l.ui)?.ui).to.equal(`${server.address}/ui/`);
      const state = lines.find((l) => l.state);
      expect(state).to.include({ state: 'uninitialized', next: 'keywarden operator init' });
      expect(state!.msg).to.contain('Keywarden is not initialized');
      expect(state!.msg).to.contain(`run keywarden operator init (with KEYWARDEN_ADDR=${server.address})`);
      // Listening comes first: the address is in use by the time the operator reads what to run.
      expect(lines.findIndex((l) => l.msg === 'listening')).to.be.lessThan(lines.indexOf(state!));

      const init = await server.client.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
      expect(init.status).to.equal(200);
      const again = await server.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
      expect(again.status).to.equal(400);
      expect(again.body.errors[0]).to.match(/^Vault is already initialized: /);
      expect(again.body.errors[0]).to.contain('Keywarden');
      expect(again.body.errors[0]).to.contain('keywarden operator unseal');
    } finally {
      await server.close();
    }
  });

  it('an initialized server starts sealed and logs the unseal command and how many shares it takes; no UI line when the UI is off', async () => {
    const log = capturedLogger();
    const server = await startTestServer({ leveldbPath: dir.path, logger: log.logger });
    try {
      const lines = log.lines();
      expect(lines.some((l) => l.ui)).to.equal(false);
      const state = lines.find((l) => l.state);
      expect(state).to.include({ state: 'sealed', next: 'keywarden operator unseal' });
      expect(state!.msg).to.contain(`run keywarden operator unseal (with KEYWARDEN_ADDR=${server.address}) once for each of 2 unseal key shares`);

      const sealed = await server.client.get('sys/mounts');
      expect(sealed.status).to.equal(503);
      // The vault CLI recognises a sealed server by this text (strings.Contains in its path-help and output code).
      expect(sealed.body.errors[0]).to.match(/^Vault is sealed: /);
      expect(sealed.body.errors[0]).to.contain('keywarden operator unseal');
    } finally {
      await server.close();
    }
  });

  describe('with an auto seal', () => {
    let sealDir: Awaited<ReturnType<typeof tempDir>>;
    const seal: SealStanza[] = [
      { type: 'static', name: 'static', priority: 1, disabled: false, currentKeyId: 'first-contact', currentKey: { kind: 'literal', value: randomBytes(32).toString('base64') } },
    ];

    beforeEach(async () => {
      sealDir = await tempDir('keywarden-first-contact-seal-');
    });
    afterEach(async () => {
      await sealDir.remove();
    });

    async function start(logger: pino.Logger) {
      const server = await startServer({ config: { ...testConfig({ leveldbPath: sealDir.path }), seal }, logger });
      return Object.assign(server, { client: new TestClient(server.address) });
    }

    it('a new server logs that init creates its root token, without unseal key shares', async () => {
      const log = capturedLogger();
      const server = await start(log.logger);
      try {
        const state = log.lines().find((l) => l.state);
        expect(state).to.include({ state: 'uninitialized', next: 'keywarden operator init' });
        expect(state!.msg).to.contain(`run keywarden operator init (with KEYWARDEN_ADDR=${server.address}) to create its root token`);
        expect(state!.msg).to.contain('its static seal wraps the root key');
        expect(state!.msg).not.to.contain('unseal key shares');
      } finally {
        await server.close();
      }
    });

    it('an initialized server logs that it unseals itself through its seal, not the unseal command, and then does', async () => {
      const first = await start(pino({ level: 'silent' }));
      try {
        const init = await first.client.put('sys/init', {});
        expect(init.status, init.text).to.equal(200);
      } finally {
        await first.close();
      }

      const log = capturedLogger();
      const server = await start(log.logger);
      try {
        const state = log.lines().find((l) => l.state);
        expect(state).to.include({ state: 'sealed', seal: 'static' });
        expect(state!.next, 'no command to type').to.equal(undefined);
        expect(state!.msg).to.contain('unseals itself through its static seal');
        expect(state!.msg).not.to.contain('keywarden operator unseal');
        expect(state!.msg).not.to.contain('unseal key shares');

        let status = (await server.client.get('sys/seal-status')).body as { sealed: boolean };
        for (let tries = 0; status.sealed && tries < 200; tries++) {
          await delay(25);
          status = (await server.client.get('sys/seal-status')).body as { sealed: boolean };
        }
        expect(status.sealed, 'unsealed through the seal, with no share typed').to.equal(false);
      } finally {
        await server.close();
      }
    });
  });
});
