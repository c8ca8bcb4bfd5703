/** sys/policies/password over HTTP: Vault's password policies and generation from them. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { generatePassword, parsePasswordPolicy } from '../../../core/system/password-policy.js';
import type { RunningServer } from '../../../core/server.js';

const POLICY = `
length = 20
rule "charset" {
  charset = "abcdefghijklmnopqrstuvwxyz"
  min-chars = 1
}
rule "charset" {
  charset = "0123456789"
  min-chars = 2
}
rule "charset" {
  charset = "!@#$"
  min-chars = 1
}
`;

describe('sys/policies/password', function () {
  let server: RunningServer & { client: TestClient };

  before(async () => {
    server = await startUnsealedServer();
  });
  after(() => server.close());

  it('stores a policy, reads it back, lists it and deletes it', async () => {
    expect((await server.client.put('sys/policies/password/app', { policy: POLICY })).status).to.equal(204);
    expect((await server.client.get('sys/policies/password/app')).body.data).to.deep.equal({ policy: POLICY });
    expect((await server.client.list('sys/policies/password')).body.data.keys).to.deep.equal(['app']);
    expect((await server.client.delete('sys/policies/password/app')).status).to.equal(204);
    expect((await server.client.get('sys/policies/password/app')).status).to.equal(404);
  });

  it('generates passwords of the length from the charsets, meeting every min-chars', async () => {
    await server.client.put('sys/policies/password/gen', { policy: POLICY });
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await server.client.get('sys/policies/password/gen/generate');
      expect(res.status).to.equal(200);
      const password = res.body.data.password as string;
      expect(password).to.match(/^[a-z0-9!@#$]{20}$/);
      expect(password.replace(/[^0-9]/g, '').length).to.be.at.least(2);
      expect(password).to.match(/[a-z]/);
      expect(password).to.match(/[!@#$]/);
      seen.add(password);
    }
    expect(seen.size).to.equal(20);
  });

  it('accepts the policy base64-encoded and in JSON', async () => {
    expect((await server.client.put('sys/policies/password/b64', { policy: Buffer.from(POLICY).toString('base64') })).status).to.equal(204);
    expect((await server.client.get('sys/policies/password/b64')).body.data.policy).to.equal(POLICY);
    const json = JSON.stringify({ length: 8, rule: [{ charset: { charset: 'xyz', 'min-chars': 1 } }] });
    expect((await server.client.put('sys/policies/password/json', { policy: json })).status).to.equal(204);
    expect((await server.client.get('sys/policies/password/json/generate')).body.data.password).to.match(/^[xyz]{8}$/);
  });

  it('refuses policies Vault refuses, with 400 naming the problem', async () => {
    const refused = async (policy: string, message: RegExp) => {
      const res = await server.client.put('sys/policies/password/bad', { policy });
      expect(res.status, policy).to.equal(400);
      expect(res.body.errors[0], policy).to.match(message);
    };
    await refused('length = 20', /no charset specified/);
    await refused('length = 3\nrule "charset" { charset = "abc" }', /between 4 and 100/);
    await refused('length = 101\nrule "charset" { charset = "abc" }', /between 4 and 100/);
    await refused('length = 4\nrule "charset" { charset = "abc" \n min-chars = 5 }', /require at least 5 characters but 4/);
    await refused('length = 8\nrule "charset" { charset = "ab\\u0007" }', /non-printable/);
    await refused('length = 8\nrule "words" { charset = "ab" }', /unrecognized rule type "words"/);
    await refused('length = 8\nrule "charset" { charset = "ab" \n max-chars = 2 }', /unknown key "max-chars"/);
    await refused('length = 8\nrule "charset" {', /invalid password policy/);
    expect((await server.client.put('sys/policies/password/bad', {})).body.errors[0]).to.match(/missing policy/);
    expect((await server.client.get('sys/policies/password/bad')).status).to.equal(404);
  });

  it('answers 404 for generating from a policy that does not exist', async () => {
    const res = await server.client.get('sys/policies/password/none/generate');
    expect(res.status).to.equal(404);
    expect(res.body.errors[0]).to.match(/policy does not exist/);
  });

  it('gives the event loop back while drawing candidates, and gives up on a policy no draw meets', async () => {
    // Four zeros from 255 characters: feasible, so accepted, but no draw meets it in practice.
    const others = Array.from({ length: 254 }, (_, i) => String.fromCodePoint(0x100 + i)).join('');
    const policy = parsePasswordPolicy(`length = 4\nrule "charset" { charset = "0" \n min-chars = 4 }\nrule "charset" { charset = "${others}" }`);
    const { result, turns } = await turnsDuring(() => generatePassword(policy).then(() => 'generated', (err: Error) => err.message));
    expect(result).to.match(/failed to generate password from policy/);
    expect(turns).to.be.at.least(100);
  });
});
