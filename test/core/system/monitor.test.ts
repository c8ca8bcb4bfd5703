/**
 * sys/monitor over HTTP and through `keywarden monitor`: the log's lines at a chosen level and
 * format, streamed until the client leaves or the node seals, with a bounded buffer per reader.
 */
import { expect } from 'chai';
import http from 'node:http';
import { pino, type Logger } from 'pino';
import { LogTap, MONITOR_BUFFER_LINES } from '../../../core/log-tap.js';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import { runCli } from '../../helpers/cli.js';
import type { RunningServer } from '../../../core/server.js';

interface Monitor {
  readonly status: number;
  readonly contentType: string | undefined;
  /** The text received so far. */
  text(): string;
  /** Resolves once the text received matches `pattern`. */
  until(pattern: RegExp): Promise<string>;
  /** Resolves when the server ends the answer. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens sys/monitor with `query`; resolves once the answer's head has come (the monitor is open). */
function openMonitor(address: string, token: string, query: string): Promise<Monitor> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${address}/v1/sys/monitor?${query}`, { headers: { 'X-Vault-Token': token } }, (res) => {
      let text = '';
      const waiters: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const wake of waiters.splice(0)) wake();
      });
      const ended = new Promise<void>((done) => res.on('end', done));
      res.on('error', () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        contentType: res.headers['content-type'],
        text: () => text,
        until: async (pattern) => {
          while (!pattern.test(text)) await new Promise<void>((wake) => waiters.push(wake));
          return text;
        },
        ended,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}

/** Waits until `tap` has `count` open monitors (a CLI process takes a while to start and connect). */
async function openMonitors(tap: LogTap, count: number): Promise<void> {
  for (let tries = 0; tap.open !== count; tries++) {
    if (tries > 1500) throw new Error(`the tap still has ${tap.open} monitors open, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('sys/monitor', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let tap: LogTap;
  let logger: Logger;

  beforeEach(async () => {
    tap = new LogTap();
    // The log itself goes nowhere here: the monitor sees each line on its way to it.
    logger = pino({ level: 'trace', hooks: { streamWrite: tap.hook } }, { write: () => undefined });
    server = await startUnsealedServer({ logger, logTap: tap });
  });
  afterEach(() => server.close());

  it('streams the lines at log_level and above, as standard text lines, and stops when the client goes away', async () => {
    const monitor = await openMonitor(server.address, server.rootToken, 'log_level=warn');
    expect(monitor.status).to.equal(200);
    expect(monitor.contentType).to.match(/^text\/plain/);
    logger.info('below the chosen level');
    logger.child({ mount: 'transit/' }).warn({ key_name: 'orders', reason: 'two words' }, 'key rotated');
    logger.error('storage is failing');
    const text = await monitor.until(/storage is failing\n/);
    const lines = text.trimEnd().split('\n');
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(/^\d{4}-\d\d-\d\dT\S+ \[WARN\]  transit: key rotated: key_name=orders reason="two words"$/);
    expect(lines[1]).to.match(/^\S+ \[ERROR\] core: storage is failing$/);
    monitor.close();
    await openMonitors(tap, 0);
  });

  it('log_format=json: Vault\'s @level, @message, @module and @timestamp, with the line\'s fields', async () => {
    const monitor = await openMonitor(server.address, server.rootToken, 'log_level=debug&log_format=json');
    logger.trace('too detailed');
    logger.child({ mount: 'auth/userpass/' }).debug({ user: 'alice' }, 'login checked');
    const line = JSON.parse((await monitor.until(/\n/)).trim()) as Record<string, unknown>;
    expect(line).to.include({ '@level': 'debug', '@message': 'login checked', '@module': 'auth/userpass', user: 'alice' });
    expect(new Date(line['@timestamp'] as string).getTime()).to.be.a('number').and.not.NaN;
    monitor.close();
    await openMonitors(tap, 0);
  });

  it('defaults to info in the standard format, and streams the server\'s own lines (a level change through sys/loggers)', async () => {
    const monitor = await openMonitor(server.address, server.rootToken, '');
    logger.debug('not at info');
    expect((await server.client.post('sys/mounts/scratch', { type: 'transit' })).status).to.equal(204);
    logger.info('marker after the mount');
    const text = await monitor.until(/marker after the mount\n/);
    expect(text).not.to.contain('not at info');
    expect(text).to.match(/\[INFO\]  core: marker after the mount\n$/);
    monitor.close();
  });

  it('holds at most the buffer for a reader that falls behind, and puts Vault\'s marker where the dropped lines were', async () => {
    const monitor = await openMonitor(server.address, server.rootToken, 'log_level=info');
    const burst = MONITOR_BUFFER_LINES + 100;
    // Written in one turn of the event loop: nothing reaches the reader until all of them are logged.
    for (let i = 0; i < burst; i++) logger.info(`line ${i}`);
    const text = await monitor.until(/Monitor dropped \d+ logs during monitor request\n/);
    const lines = text.trimEnd().split('\n');
    expect(lines).to.have.length(MONITOR_BUFFER_LINES + 1);
    expect(lines[MONITOR_BUFFER_LINES - 1]).to.match(new RegExp(`line ${MONITOR_BUFFER_LINES - 1}$`));
    expect(lines[MONITOR_BUFFER_LINES]).to.equal(`Monitor dropped ${burst - MONITOR_BUFFER_LINES} logs during monitor request`);
    logger.info('later, when the reader caught up');
    expect(await monitor.until(/later, when the reader caught up\n/)).to.match(/logs during monitor request\n\S+ \[INFO\]  core: later, when the reader caught up\n$/);
    monitor.close();
  });

  it('refuses an unknown log_level or log_format with a 400 naming it', async () => {
    const level = await server.client.get('sys/monitor?log_level=loud');
    expect(level.status).to.equal(400);
    expect(level.body.errors[0]).to.contain('unknown log level "loud"').and.contain('log_level');
    const format = await server.client.get('sys/monitor?log_format=xml');
    expect(format.status).to.equal(400);
    expect(format.body.errors[0]).to.contain('unknown log format "xml"').and.contain('log_format');
    expect(tap.open).to.equal(0);
  });

  it('needs sudo: read on sys/monitor alone is refused', async () => {
    await server.client.put('sys/policies/acl/monitor-read', { policy: 'path "sys/monitor" { capabilities = ["read"] }' });
    await server.client.put('sys/policies/acl/monitor-sudo', { policy: 'path "sys/monitor" { capabilities = ["read", "sudo"] }' });
    const reader = await createToken(server.client, { policies: ['monitor-read'] });
    expect((await new TestClient(server.address, reader).get('sys/monitor')).status).to.equal(403);
    expect(tap.open).to.equal(0);
    const sudo = await createToken(server.client, { policies: ['monitor-sudo'] });
    const monitor = await openMonitor(server.address, sudo, 'log_level=info');
    expect(monitor.status).to.equal(200);
    monitor.close();
    await openMonitors(tap, 0);
  });

  it('ends the stream with Vault\'s words when the node seals', async () => {
    const monitor = await openMonitor(server.address, server.rootToken, 'log_level=error');
    expect((await server.client.put('sys/seal', {})).status).to.equal(204);
    await monitor.ended;
    expect(monitor.text()).to.match(/core received sealed state change, ending monitor session\n$/);
    expect(tap.open).to.equal(0);
  });

  it('does not hold up a shutdown: the server closes its monitors before it drains', async () => {
    const monitor = await openMonitor(server.address, server.rootToken, 'log_level=info');
    // A drain longer than this test's time-out: the test passes only if the monitor did not wait it out.
    await server.close(120_000);
    await monitor.ended;
    expect(tap.open).to.equal(0);
  });

  it('keywarden monitor prints the lines as they come, and ends when the server ends the stream', async () => {
    const env = { VAULT_ADDR: server.address, VAULT_TOKEN: server.rootToken, PATH: process.env.PATH ?? '' };
    const refused = await runCli(['monitor', '-log-level=loud'], env);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('Error starting monitor').and.contain('unknown log level "loud"');

    const run = runCli(['monitor', '-log-level=warn', '-log-format=json'], env);
    await openMonitors(tap, 1);
    logger.info('not shown');
    logger.warn({ path: 'transit/keys/orders' }, 'watched line');
    // The CLI has the line once it is on the wire; sealing then ends the stream after it.
    expect((await server.client.put('sys/seal', {})).status).to.equal(204);
    const result = await run;
    expect(result.code).to.equal(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).to.include({ '@level': 'warn', '@message': 'watched line', path: 'transit/keys/orders' });
    expect(lines.at(-1)).to.equal('core received sealed state change, ending monitor session');
    expect(result.stdout).not.to.contain('not shown');
  });
});
