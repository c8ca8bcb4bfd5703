/**
 * A Keywarden server with the JWT/OIDC method mounted at a custom path, a file audit device, and
 * the stand-in OIDC provider it reaches only through the URLs its configuration names.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir, type ManualClock } from '../../helpers/server.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { StandInOidcProvider } from '../../fixtures/identity/oidc-provider.js';

export interface JwtHarness {
  readonly server: RunningServer & { client: TestClient };
  readonly root: TestClient;
  /** A client without a token, as a workload logging in. */
  readonly anon: TestClient;
  readonly provider: StandInOidcProvider;
  /** The mount path under auth/. */
  readonly mount: string;
  login(body: Record<string, unknown>): Promise<TestResponse>;
  /** The audit log's entries, parsed. */
  auditEntries(): Promise<Record<string, any>[]>;
  /** The audit HMAC of a text, as the file device writes it. */
  auditHash(text: string): Promise<string>;
  close(): Promise<void>;
}

export async function startJwtHarness(options: { readonly mount?: string; readonly type?: 'jwt' | 'oidc'; readonly clock?: ManualClock } = {}): Promise<JwtHarness> {
  const provider = await new StandInOidcProvider().start();
  const dir = await tempDir('keywarden-jwt-');
  const server = await startUnsealedServer({ audit: API_AUDIT, ...(options.clock ? { clock: options.clock } : {}) });
  const root = server.client;
  const mount = options.mount ?? 'ci-jwt';
  const auditFile = path.join(dir.path, 'audit.log');
  const put = await root.put('sys/audit/file', { type: 'file', options: { file_path: auditFile } });
  if (put.status !== 204) throw new Error(`audit device: ${put.text}`);
  const enabled = await root.post(`sys/auth/${mount}`, { type: options.type ?? 'jwt' });
  if (enabled.status !== 204) throw new Error(`mount: ${enabled.text}`);
  const anon = new TestClient(server.address);
  return {
    server,
    root,
    anon,
    provider,
    mount,
    login: (body) => anon.post(`auth/${mount}/login`, body),
    auditEntries: async () =>
      (await readFile(auditFile, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    auditHash: async (text) => (await root.post('sys/audit-hash/file', { input: text })).body.data.hash as string,
    close: async () => {
      await server.close();
      await provider.close();
      await dir.remove();
    },
  };
}
