/**
 * hvac's own integration test of leases (`tests/integration_tests/api/system_backend/test_lease.py`,
 * hvac commit 09902de) against a real server, through scripts/hvac-compat.py: it mounts pki,
 * generates a root, writes a role with generate_lease, issues certificates and reads, lists and
 * revokes their leases through sys/leases/*. Nothing of hvac is kept in this repository: set
 * HVAC_CHECKOUT to a directory holding hvac's `hvac/` package and `tests/` at that commit (the
 * test uses `client.write_data`, newer than Debian's python3-hvac, so the checkout's own client
 * runs it). Without it the test is skipped.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startUnsealedServer } from '../helpers/server.js';

const run = promisify(execFile);
const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/hvac-compat.py');
const TEST = 'tests/integration_tests/api/system_backend/test_lease.py';

describe('hvac compatibility: test_lease.py', function () {
  this.timeout(120_000);

  it('passes every test of hvac\'s lease suite against a pki mount', async function () {
    const checkout = process.env.HVAC_CHECKOUT;
    if (!checkout || !existsSync(path.join(checkout, TEST)) || !existsSync('/usr/bin/python3')) this.skip();
    const server = await startUnsealedServer({ plugins: [] });
    try {
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: server.rootToken };
      const result = await run('/usr/bin/python3', [SCRIPT, checkout!, TEST], { cwd: checkout!, env }).catch((err: { stdout?: string; stderr?: string }) => err);
      // The runner's summary is its last line on stdout (unittest reports on stderr).
      expect((result.stdout ?? '').trim().split('\n').pop(), `${result.stdout ?? ''}${result.stderr ?? ''}`).to.equal('5 passed, 0 failed, 0 skipped');
    } finally {
      await server.close();
    }
  });
});
