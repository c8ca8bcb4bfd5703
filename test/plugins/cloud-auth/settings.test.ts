/** The cloud auth method's block of the configuration file, `plugin "cloud" { … }`, checked when a mount is built. */
import { expect } from 'chai';
import { pino } from 'pino';
import { startServer } from '../../../core/server.js';
import { BadRequestError } from '../../../core/errors.js';
import { readSettings } from '../../../plugins/cloud-auth/backend.js';
import { testConfig } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';

describe('cloud auth settings from the configuration file', function () {
  this.timeout(30_000);

  it('reads allow_sha1_signatures as a Vault boolean, off when the block is empty', () => {
    expect(readSettings({})).to.deep.equal({ allowSha1Signatures: false });
    expect(readSettings({ allow_sha1_signatures: true })).to.deep.equal({ allowSha1Signatures: true });
    expect(readSettings({ allow_sha1_signatures: 'true' })).to.deep.equal({ allowSha1Signatures: true });
    expect(readSettings({ allow_sha1_signatures: 0 })).to.deep.equal({ allowSha1Signatures: false });
  });

  it('refuses an unknown key or a value that is not a boolean, naming it', () => {
    expect(() => readSettings({ allow_sha2: true })).to.throw(BadRequestError, 'plugin "cloud" configuration: unknown key "allow_sha2"');
    expect(() => readSettings({ allow_sha1_signatures: 'sometimes' })).to.throw(BadRequestError, /^plugin "cloud" configuration: allow_sha1_signatures: expected a boolean/);
  });

  it('fails the mount, not the server, with a 400 that names the key', async () => {
    const server = await startServer({ config: { ...testConfig(), plugins: { cloud: { allow_sha2: true } } }, plugins: [], logger: pino({ level: 'silent' }) });
    try {
      const client = new TestClient(server.address);
      const init = await client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
      await client.put('sys/unseal', { key: init.body.keys[0] });
      client.token = init.body.root_token as string;
      const res = await client.post('sys/auth/cloud', { type: 'cloud' });
      expect(res.status).to.equal(400);
      expect(res.text).to.include('unknown key \\"allow_sha2\\"');
      expect((await client.post('sys/auth/aws', { type: 'aws' })).status).to.equal(204);
    } finally {
      await server.close();
    }
  });
});
