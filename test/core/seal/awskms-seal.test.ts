/**
 * The awskms seal (issue #32): a production server whose root key is wrapped through AWS KMS (the
 * stand-in in test/fixtures/kms/, which verifies SigV4 and speaks the KMS JSON protocol) is
 * initialized, killed with SIGKILL and answers unsealed again without any unseal call; a rotated
 * key or another key behind the alias re-wraps the root key at the next start; wrong credentials
 * or a key KMS does not have leave the node sealed (or uninitialized) with the reason, and the
 * store untouched.
 */
import { expect } from 'chai';
import path from 'node:path';
import { ConfigError } from '../../../core/config/config-values.js';
import { AwsKmsSeal } from '../../../core/seal/awskms-seal.js';
import { tempDir } from '../../helpers/server.js';
import { expectMarker, failing, initAuto, REWRAPPED, SealedNode, unsealed, waitStatus, writeMarker } from '../../helpers/auto-seal.js';
import { FakeKms, KMS_REGION, type KmsCredentials } from '../../fixtures/kms/server.js';

const ALIAS = 'alias/keywarden-unseal';

describe('auto-unseal: seal "awskms" through a KMS stand-in', function () {
  this.timeout(120_000);
  let dir: { path: string; remove: () => Promise<void> };
  let node: SealedNode;
  let kms: FakeKms;
  let credentials: KmsCredentials;
  let key: { keyId: string; arn: string };

  const stanza = (over: Record<string, unknown> = {}) => ({
    awskms: { region: KMS_REGION, access_key: credentials.accessKeyId, secret_key: credentials.secretAccessKey, kms_key_id: ALIAS, endpoint: kms.url, ...over },
  });

  beforeEach(async () => {
    dir = await tempDir('keywarden-awskms-seal-');
    node = new SealedNode(dir.path, path.join(dir.path, 'data'));
    kms = await new FakeKms().start();
    credentials = kms.issueCredentials();
    key = kms.createKey(ALIAS);
  });

  afterEach(async () => {
    await node.kill();
    await kms.close();
    await dir.remove();
  });

  it('is initialized, restarted with SIGKILL, and answers unsealed without any unseal call; KMS decrypts without being told the key', async () => {
    const client = await node.start(stanza());
    expect((await client.get('sys/seal-status')).body).to.include({ type: 'awskms', initialized: false, sealed: true, recovery_seal: true });
    const token = await initAuto(client);
    expect(await waitStatus(client, unsealed)).to.include({ sealed: false, type: 'awskms' });
    await writeMarker(client, token);
    const encrypts = kms.succeeded('Encrypt');
    expect(encrypts.length).to.be.greaterThan(0);
    expect(encrypts.every((c) => c.keyId === ALIAS), 'Encrypt names kms_key_id').to.equal(true);

    await node.kill();
    const again = await node.start(stanza());
    expect(await waitStatus(again, unsealed)).to.include({ type: 'awskms', initialized: true, sealed: false, recovery_seal: true });
    await expectMarker(again, token);
    const decrypts = kms.succeeded('Decrypt');
    expect(decrypts.length).to.be.greaterThan(0);
    expect(decrypts.every((c) => c.keyId === undefined), 'Decrypt names no key').to.equal(true);
    expect(kms.calls.every((c) => c.accessKeyId === credentials.accessKeyId)).to.equal(true);
    expect(node.child!.output()).not.to.contain(credentials.secretAccessKey);
  });

  it('takes the region, the credentials with their session token, the key id and the endpoint from the AWS_* variables and VAULT_AWSKMS_SEAL_KEY_ID', async () => {
    const session = kms.issueCredentials(true);
    const env = {
      AWS_DEFAULT_REGION: KMS_REGION,
      AWS_ACCESS_KEY_ID: session.accessKeyId,
      AWS_SECRET_ACCESS_KEY: session.secretAccessKey,
      AWS_SESSION_TOKEN: session.sessionToken!,
      VAULT_AWSKMS_SEAL_KEY_ID: key.arn,
      AWS_KMS_ENDPOINT: kms.url,
    };
    // The variables win over the stanza for the key and the endpoint, as in Vault.
    const client = await node.start({ awskms: { kms_key_id: 'alias/not-this-one', endpoint: 'http://127.0.0.1:9' } }, env);
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();
    const again = await node.start({ awskms: {} }, env);
    expect(await waitStatus(again, unsealed)).to.include({ sealed: false, type: 'awskms' });
    await expectMarker(again, token);
    const encrypts = kms.succeeded('Encrypt');
    expect(encrypts.length).to.be.greaterThan(0);
    expect(encrypts.every((c) => c.keyId === key.arn), 'Encrypt names VAULT_AWSKMS_SEAL_KEY_ID').to.equal(true);
    expect(kms.calls.every((c) => c.accessKeyId === session.accessKeyId)).to.equal(true);
  });

  it('re-wraps the root key under a rotated key at the next start, after which the old key version is needed no more', async () => {
    const client = await node.start(stanza());
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();

    expect(kms.rotate(key.keyId)).to.equal(2);
    const rotated = await node.start(stanza());
    expect(await waitStatus(rotated, unsealed)).to.include({ sealed: false });
    await node.logged(REWRAPPED);
    await node.kill();

    kms.retire(key.keyId, 1);
    const withoutOld = await node.start(stanza());
    expect(await waitStatus(withoutOld, unsealed)).to.include({ sealed: false });
    await expectMarker(withoutOld, token);
  });

  it('opens the root key when the alias points at another key, and wraps it again under that key, after which the first key is needed no more', async () => {
    const client = await node.start(stanza());
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();

    const second = kms.createKey();
    kms.pointAlias(ALIAS, second.keyId);
    const moved = await node.start(stanza());
    expect(await waitStatus(moved, unsealed)).to.include({ sealed: false });
    await node.logged(REWRAPPED);
    await node.kill();

    kms.retire(key.keyId, 1);
    const withoutFirst = await node.start(stanza());
    expect(await waitStatus(withoutFirst, unsealed)).to.include({ sealed: false });
    await expectMarker(withoutFirst, token);
  });

  it('stays sealed with the reason for a wrong secret key, an unknown access key, or a key version KMS no longer has, and the store stays whole', async () => {
    const client = await node.start(stanza());
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();

    const wrongSecret = await node.start(stanza({ secret_key: kms.issueCredentials().secretAccessKey }));
    const signature = await waitStatus(wrongSecret, failing);
    expect(signature).to.include({ sealed: true, initialized: true, type: 'awskms' });
    expect(signature.seal_error).to.match(/^awskms seal: http:\/\/127\.0\.0\.1:\d+ refused Decrypt for key "alias\/keywarden-unseal" \(InvalidSignatureException/);
    await node.kill();

    const unknownKey = await node.start(stanza({ access_key: 'AKIAUNKNOWN000000000' }));
    const unrecognized = await waitStatus(unknownKey, failing);
    expect(unrecognized).to.include({ sealed: true });
    expect(unrecognized.seal_error).to.match(/UnrecognizedClientException/);
    await node.kill();

    const right = await node.start(stanza());
    expect(await waitStatus(right, unsealed)).to.include({ sealed: false });
    await expectMarker(right, token);
    await node.kill();

    kms.retire(key.keyId, 1);
    const gone = await node.start(stanza());
    const lost = await waitStatus(gone, failing);
    expect(lost).to.include({ sealed: true, initialized: true });
    expect(lost.seal_error).to.match(/cannot decrypt the stored data key with any key it has \(InvalidCiphertextException/);
  });

  it('refuses to initialize with a key KMS does not have, naming it, and leaves the server uninitialized', async () => {
    const client = await node.start(stanza({ kms_key_id: 'alias/missing' }));
    const init = await client.put('sys/init', {});
    expect(init.status).to.equal(503);
    expect(init.body.errors[0]).to.match(/awskms seal: .* refused DescribeKey for key "alias\/missing" \(NotFoundException: Alias .*alias\/missing is not found/);
    expect((await client.get('sys/init')).body.initialized).to.equal(false);
    expect(kms.succeeded('Encrypt')).to.deep.equal([]);
  });
});

describe('the awskms seal: its settings', () => {
  it('needs a key id, from kms_key_id or VAULT_AWSKMS_SEAL_KEY_ID, and refuses an AWS_KMS_ENDPOINT that is not a URL', () => {
    expect(() => new AwsKmsSeal({ type: 'awskms' }, {})).to.throw(ConfigError, /seal\.awskms\.kms_key_id: a key is required/);
    expect(() => new AwsKmsSeal({ type: 'awskms' }, { VAULT_AWSKMS_SEAL_KEY_ID: 'alias/x' })).not.to.throw();
    expect(() => new AwsKmsSeal({ type: 'awskms', kmsKeyId: 'alias/x' }, { AWS_KMS_ENDPOINT: 'kms.example/path' })).to.throw(ConfigError, /AWS_KMS_ENDPOINT: must be a URL/);
  });
});
