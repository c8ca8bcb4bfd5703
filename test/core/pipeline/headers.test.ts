/**
 * Vault request headers Keywarden does not honour are refused with a 400 naming them, so no client
 * believes its request ran in a namespace or passed a check that never ran.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';

describe('request header checks', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;

  before(async () => {
    server = await startUnsealedServer();
    await server.client.post('sys/mounts/transit', { type: 'transit' });
    await server.client.post('transit/keys/k', {});
  });
  after(() => server.close());

  const encrypt = (headers: Record<string, string>) => server.client.post('transit/encrypt/k', { plaintext: 'c2VjcmV0' }, { headers });

  it('refuses a namespace other than root, and runs nothing in the root namespace for it', async () => {
    const res = await server.client.post('transit/keys/from-namespace', {}, { headers: { 'X-Vault-Namespace': 'team-a/' } });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.equal('header X-Vault-Namespace: namespaces are not supported; only the root namespace exists');
    expect((await server.client.get('transit/keys/from-namespace')).status).to.equal(404);
  });

  for (const root of ['', 'root', 'root/', '/']) {
    it(`accepts the root namespace spelled ${JSON.stringify(root)}`, async () => {
      expect((await encrypt({ 'X-Vault-Namespace': root })).status).to.equal(200);
    });
  }

  for (const header of ['X-Vault-MFA', 'X-Vault-Policy-Override', 'X-Vault-Index', 'X-Vault-Inconsistent', 'X-Vault-Forward']) {
    it(`refuses ${header}, which it does not honour`, async () => {
      const res = await encrypt({ [header]: 'x' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.contain(header);
    });
  }

  it('accepts X-Vault-Request, which the vault CLI sends with every request', async () => {
    expect((await encrypt({ 'X-Vault-Request': 'true' })).status).to.equal(200);
  });
});
