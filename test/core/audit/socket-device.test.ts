/**
 * The `socket` audit device against real collectors in this process: a TCP server, a UDP socket
 * and a unix stream server, each enabled over HTTP as an operator would.
 */
import { expect } from 'chai';
import path from 'node:path';
import { API_AUDIT, reloadAudit, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { datagramCollector, entriesOf, streamCollector, type Collector } from './listeners.js';

type Server = Awaited<ReturnType<typeof startUnsealedServer>>;

describe('socket audit device', function () {
  this.timeout(30_000);
  let server: Server;
  let dir: { path: string; remove: () => Promise<void> };
  const collectors: Collector[] = [];

  /** The audit settings an operator gives this server: API devices, prefixes, and the test's collectors listed. */
  const auditTo = (addresses: readonly string[]) => ({
    ...API_AUDIT,
    allowAuditLogPrefixing: true,
    apiAuditSocketAllowlist: [...['collector.sock', 'nobody.sock'].map((name) => path.join(dir.path, name)), ...addresses],
  });

  beforeEach(async () => {
    dir = await tempDir();
    // The listener takes the 24 MB string below (max_json_string_value_length).
    server = await startUnsealedServer({ audit: auditTo([]), jsonLimits: { stringLength: 32 * 1024 * 1024 } });
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
  });
  afterEach(async () => {
    await server.close();
    await Promise.all(collectors.splice(0).map((c) => c.close()));
    await dir.remove();
  });

  /** Starts a collector; one on a new TCP or UDP port is added to the allowlist (SIGHUP, as an operator would). */
  async function collect(make: () => Promise<Collector>): Promise<Collector> {
    const collector = await make();
    collectors.push(collector);
    if (!auditTo([]).apiAuditSocketAllowlist.includes(collector.address)) await reloadAudit(server, auditTo(collectors.map((c) => c.address)));
    return collector;
  }

  /** Writes a note and returns the request and response entries the collector got for it. */
  async function noteRecorded(collector: Collector, name: string, prefix = '') {
    const res = await server.client.post(`notes/notes/${name}`, { text: `secret ${name}` });
    expect(res.status, res.text).to.equal(204);
    const forPath = () => entriesOf(collector.lines, prefix).filter((e) => e.request?.path === `notes/notes/${name}`);
    await collector.waitFor(() => forPath().length === 2);
    const [request, response] = forPath();
    return { request: request!, response: response! };
  }

  for (const kind of ['tcp', 'udp', 'unix'] as const) {
    it(`records every request and response to a ${kind} collector, tokens and data as HMACs`, async () => {
      const collector = await collect(() =>
        kind === 'udp' ? datagramCollector() : streamCollector(kind === 'tcp' ? { tcp: true } : { path: path.join(dir.path, 'collector.sock') }),
      );
      const enabled = await server.client.post('sys/audit/net', {
        type: 'socket',
        options: { address: collector.address, socket_type: kind, prefix: 'kw:' },
      });
      expect(enabled.status, enabled.text).to.equal(204);

      const { request, response } = await noteRecorded(collector, 'one', 'kw:');
      expect(request.type).to.equal('request');
      expect(response.type).to.equal('response');
      expect(response.request.id).to.equal(request.request.id);
      const hash = async (input: string) => (await server.client.post('sys/audit-hash/net', { input })).body.data.hash as string;
      expect(request.request.client_token).to.equal(await hash(server.rootToken));
      expect(request.request.data.text).to.equal(await hash('secret one'));
      expect(collector.lines.join('\n')).not.to.contain(server.rootToken);
      expect(collector.lines.join('\n')).not.to.contain('secret one');

      const listed = (await server.client.get('sys/audit')).body.data['net/'];
      expect(listed).to.deep.include({ type: 'socket', options: { address: collector.address, socket_type: kind, prefix: 'kw:' } });
    });
  }

  it('reconnects after the collector closed the connection, and loses no entry of later requests', async () => {
    const collector = await collect(() => streamCollector({ tcp: true }));
    expect((await server.client.post('sys/audit/net', { type: 'socket', options: { address: collector.address } })).status).to.equal(204);
    await noteRecorded(collector, 'before');
    expect(collector.connections).to.equal(1);

    await collector.dropConnections();
    await noteRecorded(collector, 'after');
    expect(collector.connections).to.equal(2);
    await noteRecorded(collector, 'again');
    expect(collector.connections).to.equal(2);
  });

  it('reconnects on reload (SIGHUP), and releases its connection when disabled', async () => {
    const collector = await collect(() => streamCollector({ tcp: true }));
    expect((await server.client.post('sys/audit/net', { type: 'socket', options: { address: collector.address } })).status).to.equal(204);
    await noteRecorded(collector, 'first');
    expect(collector.connections).to.equal(1);
    await server.reload();
    await noteRecorded(collector, 'reloaded');
    expect(collector.connections).to.equal(2);

    expect((await server.client.delete('sys/audit/net')).status).to.equal(204);
    await collector.waitFor(() => collector.open === 0);
    // The disabling request's own entry was flushed before the connection closed.
    expect(entriesOf(collector.lines).some((e) => e.type === 'request' && e.request.path === 'sys/audit/net')).to.equal(true);
  });

  it('refuses requests (503) while its only collector is gone, runs nothing unaudited, and resumes when it is back', async () => {
    const socketPath = path.join(dir.path, 'collector.sock');
    const first = await collect(() => streamCollector({ path: socketPath }));
    expect((await server.client.post('sys/audit/net', { type: 'socket', options: { address: socketPath, socket_type: 'unix' } })).status).to.equal(204);
    await noteRecorded(first, 'before');

    await first.close();
    const refused = await server.client.post('notes/notes/while-gone', { text: 'must not be stored' });
    expect(refused.status).to.equal(503);
    expect(refused.body.errors).to.deep.equal(['no audit device could record the request']);

    const second = await collect(() => streamCollector({ path: socketPath }));
    const read = await server.client.get('notes/notes/while-gone');
    expect(read.status).to.equal(404);
    await noteRecorded(second, 'after');
  });

  it('bounds a write to a collector that stops reading by write_timeout: the request is refused, not left hanging', async () => {
    const collector = await collect(() => streamCollector({ tcp: true }));
    expect(
      (await server.client.post('sys/audit/net', { type: 'socket', options: { address: collector.address, write_timeout: '300ms', log_raw: 'true' } })).status,
    ).to.equal(204);
    await noteRecorded(collector, 'small');
    collector.pause();

    // Larger than what the loopback socket buffers of both ends hold (log_raw: the entry carries the
    // text itself), so the write cannot complete.
    const big = 'x'.repeat(24 * 1024 * 1024);
    const started = Date.now();
    const res = await server.client.post('notes/notes/big', { text: big });
    const elapsed = Date.now() - started;
    expect(res.status).to.equal(503);
    // Two attempts of 300 ms each, plus hashing and parsing 24 MB on a shared machine.
    expect(elapsed).to.be.lessThan(15_000);
    collector.resume();
    expect((await server.client.get('notes/notes/big')).status).to.equal(404);
  });

  it('over UDP, fails an entry too large for one datagram rather than cutting it: alone, the device refuses the request', async () => {
    const collector = await collect(() => datagramCollector());
    const enabled = await server.client.post('sys/audit/net', { type: 'socket', options: { address: collector.address, socket_type: 'udp', log_raw: 'true' } });
    expect(enabled.status, enabled.text).to.equal(204);
    const res = await server.client.post('notes/notes/too-big', { text: 'y'.repeat(70_000) });
    expect(res.status).to.equal(503);
    expect(collector.lines.some((l) => l.includes('too-big'))).to.equal(false);
    expect((await server.client.post('notes/notes/small', { text: 'fits' })).status).to.equal(204);
  });

  it('refuses bad options with a 400 naming the option, and an unreachable address naming it', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /option "address" is required/],
      [{ address: 'localhost' }, /option "address": "localhost" is not host:port/],
      [{ address: '127.0.0.1:1', socket_type: 'sctp' }, /option "socket_type": "sctp" is not one of tcp, udp, unix/],
      [{ address: '127.0.0.1:1', write_timeout: 'soon' }, /option "write_timeout"/],
      [{ address: '127.0.0.1:1', write_timeout: '0s' }, /option "write_timeout": "0s" must be between 1ms and 1m/],
      [{ address: '127.0.0.1:1', facility: 'AUTH' }, /unknown audit device option\(s\) "facility"/],
      [{ address: '127.0.0.1:1', format: 'jsonx' }, /unsupported format "jsonx"/],
      [{ address: path.join(dir.path, 'nobody.sock'), socket_type: 'unix' }, /cannot connect to audit socket unix .*nobody\.sock: ENOENT/],
    ];
    for (const [options, message] of cases) {
      const res = await server.client.post('sys/audit/net', { type: 'socket', options });
      expect(res.status, JSON.stringify(options)).to.equal(400);
      expect(res.body.errors[0], JSON.stringify(options)).to.match(message);
    }
    expect((await server.client.get('sys/audit')).body.data).to.deep.equal({});
  });
});
