/** A Keywarden server on an https listener, with a certificate from a throwaway test CA. */
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../core/server.js';
import { createTestCa, type TestCa } from './certificates.js';
import { testConfig } from './server.js';

export interface TlsTestServer {
  readonly server: RunningServer;
  /** The CA that signed the server's certificate (for 127.0.0.1 and localhost). */
  readonly ca: TestCa;
}

/** Starts an uninitialized in-memory server on https; its CA's files are written to `dir`. */
export async function startTlsTestServer(dir: string): Promise<TlsTestServer> {
  const ca = await createTestCa(dir);
  const cert = await ca.issue('server', { commonName: 'keywarden.test', usage: 'server', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
  const base = testConfig();
  const server = await startServer({
    config: {
      ...base,
      listeners: [{ ...base.listeners[0]!, tls: { certFile: cert.certFile, keyFile: cert.keyFile, minVersion: 'TLSv1.2', clientCertificates: 'none' } }],
    },
    plugins: [],
    logger: pino({ level: 'silent' }),
  });
  return { server, ca };
}
