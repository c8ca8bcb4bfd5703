#!/usr/bin/env node
/**
 * A stand-in for the cloud provider, to try the cloud auth method without an AWS account: one HTTP
 * server on 127.0.0.1 that answers STS and IAM calls as the provider does and checks their SigV4
 * signatures. It knows one account, 123456789012, with two IAM users: keywarden-server (whose keys
 * the server uses to look principals up) and orders-app (the workload that logs in).
 *
 * It is the fake provider of the test suite (test/fixtures/cloud), so it runs from a built clone.
 *
 *   node examples/stand-in-provider.js FILE
 *
 * writes FILE, for a shell to source, once it listens: PROVIDER_URL and the users' keys
 * (SERVER_ACCESS_KEY, SERVER_SECRET_KEY, APP_ACCESS_KEY, APP_SECRET_KEY). It runs until SIGINT or
 * SIGTERM, then removes FILE: the keys die with it.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { FakeCloud } from '../dist/test/fixtures/cloud/server.js';
import { World } from '../dist/test/fixtures/cloud/world.js';

const ACCOUNT = '123456789012';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node examples/stand-in-provider.js FILE (where to write the endpoint and keys)\n');
  process.exit(2);
}

const world = new World();
const serverKey = world.keyFor(world.addUser(ACCOUNT, 'keywarden-server'));
const appKey = world.keyFor(world.addUser(ACCOUNT, 'orders-app'));
const provider = await new FakeCloud(world).start();

const lines = [
  `# The stand-in provider (pid ${process.pid}): account ${ACCOUNT}, users keywarden-server and orders-app.`,
  `export PROVIDER_URL='${provider.url}'`,
  `export SERVER_ACCESS_KEY='${serverKey.accessKeyId}' SERVER_SECRET_KEY='${serverKey.secretAccessKey}'`,
  `export APP_ACCESS_KEY='${appKey.accessKeyId}' APP_SECRET_KEY='${appKey.secretAccessKey}'`,
];
// Renamed into place, so whoever waits for the file never reads half of it.
writeFileSync(`${file}.tmp`, `${lines.join('\n')}\n`, { mode: 0o600 });
renameSync(`${file}.tmp`, file);
process.stdout.write(`stand-in provider listening on ${provider.url}; endpoint and keys in ${file}\n`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    rmSync(file, { force: true });
    void provider.close();
  });
}
