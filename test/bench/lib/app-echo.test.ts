import { expect } from 'chai';
import { startHelper } from '../../../bench/lib/helper-process.js';

describe("Keywarden's HTTP layer alone (bench/lib/app-echo.ts, the transit-ops floor)", () => {
  let app: Awaited<ReturnType<typeof startHelper>>;
  before(async () => {
    app = await startHelper('app-echo.js', '/v1/transit/encrypt/plain');
  });
  after(() => app.stop());

  it('answers a single-item encrypt with a token with 200 and an encrypt-shaped body, as the benchmark needs', async () => {
    const res = await fetch(app.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Vault-Token': 'bench' },
      body: JSON.stringify({ plaintext: 'aGVsbG8=' }),
    });
    expect(res.status).to.equal(200);
    expect((await res.json()) as unknown).to.deep.include({ data: { ciphertext: 'vault:v1:aGVsbG8=', key_version: 1 } });
  });
});
