/**
 * `keywarden server`'s output is a log to be parsed line by line: every line it writes is JSON,
 * the warnings its dependencies raise included (the AWS SDK's notice about Node versions is a
 * multi-line text block when Node prints it).
 */
import { expect } from 'chai';
import path from 'node:path';
import { tempDir } from '../../helpers/server.js';
import { FakeCloud } from '../../fixtures/cloud/server.js';
import { World } from '../../fixtures/cloud/world.js';
import { Api } from '../../reliability/support/http.js';
import { initialize, spawnServer, unsealWith, writeConfig, type ChildServer } from '../../reliability/support/child.js';

/** The SDK's own threshold: on an older Node, building any of its clients raises the notice. */
const SDK_WARNS_ON_THIS_NODE = Number(process.versions.node.split('.')[0]) < 22;

describe('keywarden server log lines', function () {
  this.timeout(60_000);

  let fake: FakeCloud;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let proc: ChildServer | undefined;

  before(async () => {
    fake = await new FakeCloud(new World()).start();
    dir = await tempDir('keywarden-log-lines-');
  });

  after(async () => {
    if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
    await fake.close();
    await dir.remove();
  });

  it('are all JSON, the AWS SDK warning raised when the cloud auth method first builds an SDK client among them', async () => {
    const account = '111122223333';
    const serverUser = fake.world.addUser(account, 'keywarden-server');
    const app = fake.world.addUser(account, 'orders-app');
    const serverKey = fake.world.keyFor(serverUser);
    const configFile = await writeConfig(dir.path, { dataDir: path.join(dir.path, 'data') });
    proc = await spawnServer(configFile, dir.path);

    const api = new Api(proc.address);
    const init = await initialize(api);
    await unsealWith(api, init.keys);
    api.token = init.rootToken;
    await api.expect('POST', 'sys/auth/cloud', { type: 'cloud' });
    await api.expect('POST', 'auth/cloud/config/client', {
      access_key: serverKey.accessKeyId,
      secret_key: serverKey.secretAccessKey,
      iam_endpoint: fake.url,
      sts_endpoint: fake.url,
    });
    // Binding a principal resolves its unique ID through the IAM client: the server's first SDK client.
    await api.expect('POST', 'auth/cloud/role/orders-app', { auth_type: 'iam', bound_iam_principal_arn: app.arn });
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.deep.equal({ code: 0, signal: null });

    const lines = proc.output().split('\n').filter((line) => line !== '');
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
    expect(notJson, 'lines that are not JSON').to.deep.equal([]);
    const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string; warning?: string });
    expect(entries.map((e) => e.msg)).to.include.members(['listening', 'shutting down']);
    const sdkNotices = entries.filter((e) => e.msg.includes('AWS SDK for JavaScript'));
    if (SDK_WARNS_ON_THIS_NODE) {
      expect(sdkNotices).to.have.length(1);
      expect(sdkNotices[0]).to.include({ level: 40, warning: 'Warning' });
      expect(sdkNotices[0]!.msg).to.match(/^NodeVersionSupportWarning: The AWS SDK for JavaScript \(v3\) .* will require node >=22\./);
    } else {
      expect(sdkNotices).to.deep.equal([]);
    }
  });
});
