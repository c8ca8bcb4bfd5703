/**
 * The parity probe: every open-source `sys/*` and `identity/*` operation of Vault's OpenAPI
 * document (test/fixtures/vault-openapi/, from hashicorp/vault-client-go) sent to a real server
 * with a token of the default policy, which runs nothing it does not allow: an operation is
 * answered when the server knows the path and the method (a 403 for want of a policy counts), and
 * unsupported when it answers 405, or 404 "unsupported path" (no route, or a path refused as not supported). The test prints the
 * counts and, with PARITY_MISSING=1, every unsupported operation; it fails when a count falls
 * below the floor reached, so no change takes an operation away unnoticed.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUnsealedServer } from '../helpers/server.js';
import { TestClient, createToken } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';

interface Operation {
  readonly path: string;
  readonly method: string;
  readonly list?: 'required' | 'optional';
}

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/vault-openapi/operations.json');

/**
 * Enterprise-only operations: namespaces, replication, MFA, control groups, Sentinel (EGP/RGP)
 * policies, licensing, managed keys, seal wrap, lease-count quotas, automated raft snapshots
 * (https://developer.hashicorp.com/vault/docs/enterprise).
 */
const ENTERPRISE = [
  /^sys\/(control-group|license|managed-keys|mfa|namespaces|replication|sealwrap)(\/|$)/,
  /^sys\/config\/(control-group|group-policy-application)$/,
  /^sys\/policies\/(egp|rgp)\//,
  /^sys\/quotas\/lease-count\//,
  /^sys\/storage\/raft\/snapshot-auto\//,
  /^sys\/internal\/ui\/namespaces$/,
];

/** Where the floor stands: raise it when an operation is added. */
const FLOOR = { sys: 140, identity: 57 };

const SAMPLE = 'probe';

function concrete(template: string): string {
  return template.replace(/\{[^}]+\}/g, SAMPLE);
}

describe('parity with Vault\'s open-source sys/* and identity/* operations', function () {
  this.timeout(120_000);
  let server: RunningServer & { client: TestClient };
  let caller: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    caller = new TestClient(server.address, await createToken(server.client, { policies: ['default'] }));
  });
  after(() => server.close());

  async function supported(op: Operation): Promise<boolean> {
    const method = op.list === 'required' ? 'LIST' : op.method;
    const target = concrete(op.path);
    const res = await caller.send(method, target, method === 'POST' ? { body: {} } : {});
    if (res.status === 405) return false;
    if (res.status !== 404) return true;
    const reason = String(res.body?.errors?.[0] ?? '');
    return !/unsupported path|no handler for route|is not supported/.test(reason);
  }

  it('answers at least the floor of open-source operations', async () => {
    const all = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { operations: Operation[] }).operations;
    const open = all.filter((op) => !ENTERPRISE.some((re) => re.test(op.path)));
    const counts = { sys: { answered: 0, total: 0 }, identity: { answered: 0, total: 0 } };
    const missing: string[] = [];
    for (const op of open) {
      const group = op.path.startsWith('sys/') ? counts.sys : counts.identity;
      group.total++;
      if (await supported(op)) group.answered++;
      else missing.push(`${op.list === 'required' ? 'LIST' : op.method} ${op.path}`);
    }
    console.log(`      sys/*: ${counts.sys.answered} of ${counts.sys.total}; identity/*: ${counts.identity.answered} of ${counts.identity.total}`);
    if (process.env.PARITY_MISSING) console.log(missing.map((m) => `      missing: ${m}`).join('\n'));
    expect(counts.sys.total).to.equal(172);
    expect(counts.identity.total).to.equal(109);
    expect(counts.sys.answered).to.be.at.least(FLOOR.sys);
    expect(counts.identity.answered).to.be.at.least(FLOOR.identity);
  });
});
