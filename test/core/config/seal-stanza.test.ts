import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, parseConfig } from '../../../core/config/config.js';

const BASE = path.resolve('/etc/keywarden');
const KEY_HEX = 'ab'.repeat(32);

const withSeal = (seal: unknown): Record<string, unknown> => ({ storage: { inmem: {} }, listener: { tcp: { tls_disable: true } }, seal });

function refusal(doc: unknown): string {
  try {
    parseConfig(doc, BASE);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  expect.fail(`expected ${JSON.stringify(doc)} to be refused`);
}

describe('configuration: the seal stanza', () => {
  it('reads seal "static" with its keys as env://, file:// (relative to the file) or literal, and the previous key beside the current one', () => {
    const config = parseConfig(withSeal({ static: { current_key_id: 'k2', current_key: 'file://keys/k2', previous_key_id: 'k1', previous_key: 'env://OLD_KEY' } }), BASE);
    expect(config.seal).to.deep.equal([
      {
        type: 'static',
        name: 'static',
        priority: 1,
        disabled: false,
        currentKeyId: 'k2',
        currentKey: { kind: 'file', path: path.join(BASE, 'keys/k2') },
        previous: { keyId: 'k1', key: { kind: 'env', name: 'OLD_KEY' } },
      },
    ]);
    expect(parseConfig(withSeal({ static: { current_key_id: 'k', current_key: KEY_HEX } }), BASE).seal![0]).to.deep.include({ currentKey: { kind: 'literal', value: KEY_HEX } });
  });

  it('refuses a literal static key that is not 32 bytes without repeating it, and a previous key without its id', () => {
    const message = refusal(withSeal({ static: { current_key_id: 'k', current_key: 'c2VjcmV0LWJ1dC1zaG9ydA==' } }));
    expect(message).to.match(/seal\.static\.current_key: must be env:\/\/NAME, file:\/\/PATH, or a 32-byte key in base64 or hex/);
    expect(message).not.to.contain('c2VjcmV0');
    expect(refusal(withSeal({ static: { current_key_id: 'k', current_key: KEY_HEX, previous_key: KEY_HEX } }))).to.match(/previous_key and previous_key_id go together/);
    expect(refusal(withSeal({ static: { current_key: KEY_HEX } }))).to.match(/current_key_id is required/);
  });

  it('reads seal "transit" with Vault\'s names and defaults', () => {
    const config = parseConfig(
      withSeal({ transit: { address: 'https://transit.example:8200/', token: 's.x', mount_path: '/transit/', key_name: 'autounseal', tls_ca_cert: 'ca.pem', tls_skip_verify: 'false' } }),
      BASE,
    );
    expect(config.seal).to.deep.equal([{
      type: 'transit',
      name: 'transit',
      priority: 1,
      disabled: false,
      address: 'https://transit.example:8200',
      token: 's.x',
      mountPath: 'transit',
      keyName: 'autounseal',
      keyIdPrefix: '',
      disableRenewal: false,
      tls: { caCert: path.join(BASE, 'ca.pem'), skipVerify: false },
    }]);
  });

  it('refuses a transit address that is not a bare URL, and missing required settings', () => {
    expect(refusal(withSeal({ transit: { address: 'transit.example:8200', mount_path: 'transit', key_name: 'k' } }))).to.match(/seal\.transit\.address: must be a URL/);
    expect(refusal(withSeal({ transit: { address: 'http://t:8200/v1/x', mount_path: 'transit', key_name: 'k' } }))).to.match(/seal\.transit\.address: must be a URL/);
    expect(refusal(withSeal({ transit: { address: 'http://t:8200', key_name: 'k' } }))).to.match(/mount_path is required/);
    expect(refusal(withSeal({ transit: { address: 'http://t:8200', mount_path: 'transit', key_name: 'k', tls_client_cert: 'c.pem' } }))).to.match(/tls_client_cert and tls_client_key go together/);
  });

  it('reads seal "awskms" with Vault\'s names, leaving what is unset to the environment at start', () => {
    const config = parseConfig(
      withSeal({ awskms: { region: 'eu-west-1', access_key: 'AKIAEXAMPLE', secret_key: 'secret', session_token: 'session', kms_key_id: 'alias/unseal', endpoint: 'https://kms.internal:8443/' } }),
      BASE,
    );
    expect(config.seal).to.deep.equal([{
      type: 'awskms',
      name: 'awskms',
      priority: 1,
      disabled: false,
      region: 'eu-west-1',
      accessKey: 'AKIAEXAMPLE',
      secretKey: 'secret',
      sessionToken: 'session',
      kmsKeyId: 'alias/unseal',
      endpoint: 'https://kms.internal:8443',
    }]);
    expect(parseConfig(withSeal({ awskms: {} }), BASE).seal).to.deep.equal([{ type: 'awskms', name: 'awskms', priority: 1, disabled: false }]);
  });

  it('refuses an awskms access key without its secret, a session token alone, and an endpoint that is not a bare URL, without repeating a credential', () => {
    const message = refusal(withSeal({ awskms: { access_key: 'AKIAEXAMPLE' } }));
    expect(message).to.match(/seal\.awskms\.access_key: access_key and secret_key go together/);
    expect(message).not.to.contain('AKIAEXAMPLE');
    expect(refusal(withSeal({ awskms: { secret_key: 'very-secret' } }))).not.to.contain('very-secret');
    expect(refusal(withSeal({ awskms: { session_token: 'tok' } }))).to.match(/seal\.awskms\.session_token: session_token goes with access_key and secret_key/);
    expect(refusal(withSeal({ awskms: { endpoint: 'kms.internal:8443' } }))).to.match(/seal\.awskms\.endpoint: must be a URL/);
    expect(refusal(withSeal({ awskms: { endpoint: 'https://kms.internal/v1' } }))).to.match(/seal\.awskms\.endpoint: must be a URL/);
    expect(refusal(withSeal({ awskms: { region: 'EU WEST' } }))).to.match(/seal\.awskms\.region: must be an AWS region/);
    expect(refusal(withSeal({ awskms: { kms_key_id: '' } }))).to.match(/seal\.awskms\.kms_key_id: must not be empty/);
  });

  it('reads several seal stanzas with Vault\'s Seal HA names, by priority, a stanza\'s name being its type when unset', () => {
    const transit = { address: 'http://t:8200', mount_path: 'transit', key_name: 'k' };
    const config = parseConfig(withSeal([{ transit: { ...transit, name: 'east', priority: '2' } }, { static: { current_key_id: 'a', current_key: KEY_HEX, priority: 1, disabled: 'true' } }]), BASE);
    expect(config.seal!.map((s) => [s.type, s.name, s.priority, s.disabled])).to.deep.equal([
      ['static', 'static', 1, true],
      ['transit', 'east', 2, false],
    ]);
  });

  it('refuses several seal stanzas without a priority each, with a priority or a name twice, or a name that cannot end a variable name', () => {
    const transit = (more: Record<string, unknown>) => ({ transit: { address: 'http://t:8200', mount_path: 'transit', key_name: 'k', ...more } });
    expect(refusal(withSeal([transit({ name: 'a', priority: 1 }), transit({ name: 'b' })]))).to.match(/priority is required when there are several seal stanzas/);
    expect(refusal(withSeal([transit({ name: 'a', priority: 1 }), transit({ name: 'b', priority: 1 })]))).to.match(/priority 1 is taken by the stanza on line/);
    expect(refusal(withSeal([transit({ priority: 1 }), transit({ priority: 2 })]))).to.match(/two seal stanzas are named "transit"/);
    expect(refusal(withSeal(transit({ name: 'us-east' })))).to.match(/seal\.transit\.name: must be letters, digits and "_"/);
    expect(refusal(withSeal(transit({ priority: 0 })))).to.match(/seal\.transit\.priority: must be 1 or more/);
  });

  it('takes every seal stanza disabled: the form that moves a store back to Shamir shares', () => {
    const transit = { address: 'http://t:8200', mount_path: 'transit', key_name: 'k', disabled: 'true' };
    expect(parseConfig(withSeal({ transit }), BASE).seal!.map((s) => [s.type, s.disabled])).to.deep.equal([['transit', true]]);
  });

  it('refuses what it does not honour, each with the reason: unknown keys and types', () => {
    expect(refusal(withSeal({ transit: { address: 'http://t:8200', mount_path: 'transit', key_name: 'k', namespace: 'ns1' } }))).to.match(/seal\.transit\.namespace: not supported/);
    expect(refusal(withSeal({ static: { current_key_id: 'k', current_key: KEY_HEX, keyid: 'x' } }))).to.match(/seal\.static\.keyid: unknown key/);
    expect(refusal(withSeal({ pkcs11: {} }))).to.match(/unknown seal type "pkcs11"; expected "awskms", "static" or "transit"/);
    expect(refusal(withSeal({ shamir: {} }))).to.match(/Shamir is the seal without a seal stanza/);
    expect(refusal(withSeal({ awskms: { kms_key_id: 'alias/x', shared_creds_profile: 'p' } }))).to.match(/seal\.awskms\.shared_creds_profile: unknown key/);
  });
});
