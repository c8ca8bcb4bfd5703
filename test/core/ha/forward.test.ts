/**
 * Signing and checking forwarded requests (core/ha/forward.ts): what a standby sends, taken apart
 * as the active node's HTTP layer hands it to the host, changed the ways someone on the wire could.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { checkForwarded, ForwardNonces, signForward, type ForwardCheck, type SignedForward } from '../../../core/ha/forward.js';
import { UnavailableError } from '../../../core/errors.js';
import { keepExactText } from '../../../core/framework/exact-json.js';
import type { HostRequest } from '../../../core/host.js';

const key = randomBytes(32);
const signer = { key: () => key };

/** A write as the standby received it from its client. */
const fromClient: HostRequest = {
  method: 'PUT',
  path: 'sys/policies/acl/a b',
  query: {},
  body: { policy: 'path "x" { capabilities = ["read"] }' },
  headers: {
    host: 'standby:8200',
    'content-type': 'application/json',
    'content-length': '42',
    'x-vault-token': 'hvs.victim',
    'x-vault-wrap-ttl': '5m',
    'x-forwarded-for': '198.51.100.1',
    'user-agent': 'test',
  },
  remoteAddress: '203.0.113.7',
};

interface WireChange {
  readonly method?: string;
  readonly url?: string;
  readonly headers?: Record<string, string | undefined>;
  readonly body?: string;
}

/** `signed`, with `change` made on the wire, as the active node's HTTP layer hands it over. */
function received(signed: SignedForward, change: WireChange = {}): HostRequest {
  const url = new URL(change.url ?? signed.path, 'http://active');
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries({ ...signed.headers, ...change.headers })) {
    if (value !== undefined) headers[name] = value;
  }
  const raw = change.body !== undefined ? Buffer.from(change.body) : signed.body;
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] ??= value;
  return {
    method: change.method ?? signed.method,
    path: decodeURIComponent(url.pathname.slice('/v1/'.length)),
    query,
    body: raw === undefined || raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8')),
    headers,
    remoteAddress: '10.0.0.2',
    rawBody: raw,
  };
}

function accepted(check: ForwardCheck | undefined): HostRequest {
  if (!check || !('request' in check)) throw new Error(`expected the request to be accepted, got ${JSON.stringify(check)}`);
  return check.request;
}

function refusal(check: ForwardCheck | undefined): string | undefined {
  return check && 'refused' in check ? check.refused : undefined;
}

describe('HA request forwarding: signing and checking', () => {
  it('accepts a signed request with the client address the standby vouches for and only the headers it signed', () => {
    const wire = received(signForward(fromClient, key), { headers: { 'x-vault-namespace': 'added-on-the-way', via: '1.1 proxy' } });
    const request = accepted(checkForwarded(wire, signer, new ForwardNonces()));
    expect(request.remoteAddress).to.equal('203.0.113.7');
    expect(request.headers).to.deep.equal({ 'content-type': 'application/json', 'user-agent': 'test', 'x-vault-token': 'hvs.victim', 'x-vault-wrap-ttl': '5m' });
    expect(request).to.deep.include({ method: 'PUT', path: 'sys/policies/acl/a b', body: fromClient.body, rawBody: undefined });
  });

  it('leaves a request without forwarding headers alone', () => {
    expect(checkForwarded({ ...fromClient, rawBody: Buffer.from('{}') }, signer, new ForwardNonces())).to.equal(undefined);
  });

  it('trusts nothing while sealed: forwarding headers are left alone, no address is vouched for', () => {
    expect(checkForwarded(received(signForward(fromClient, key)), { key: () => undefined }, new ForwardNonces())).to.equal(undefined);
  });

  it('refuses the forwarding headers with another token', () => {
    const signed = signForward(fromClient, key);
    expect(refusal(checkForwarded(received(signed, { headers: { 'x-vault-token': 'hvs.thief' } }), signer, new ForwardNonces()))).to.equal('the MAC does not verify');
  });

  it('drops a token header added on the way, so the host never reads it', () => {
    const login: HostRequest = { ...fromClient, path: 'auth/userpass/login/alice', headers: { 'content-type': 'application/json' } };
    const wire = received(signForward(login, key), { headers: { authorization: 'Bearer hvs.thief', 'x-service-token': 'hvs.thief' } });
    expect(accepted(checkForwarded(wire, signer, new ForwardNonces())).headers).to.deep.equal({ 'content-type': 'application/json' });
  });

  it('refuses another body, down to its bytes', () => {
    const signed = signForward(fromClient, key);
    const sameValue = JSON.stringify(fromClient.body, null, 1);
    for (const body of [sameValue, JSON.stringify({ policy: 'path "*" { capabilities = ["sudo"] }' }), '']) {
      expect(refusal(checkForwarded(received(signed, { body }), signer, new ForwardNonces())), body).to.equal('the MAC does not verify');
    }
  });

  it('refuses another value of any header it signed: Content-Type, X-Vault-Wrap-TTL, one it removed', () => {
    const signed = signForward(fromClient, key);
    for (const headers of [{ 'content-type': 'application/merge-patch+json' }, { 'x-vault-wrap-ttl': '768h' }, { 'user-agent': undefined }]) {
      expect(refusal(checkForwarded(received(signed, { headers }), signer, new ForwardNonces())), JSON.stringify(headers)).to.equal('the MAC does not verify');
    }
  });

  it('refuses another method, path or query', () => {
    const signed = signForward(fromClient, key);
    for (const change of [{ method: 'POST' }, { url: '/v1/sys/policies/acl/other' }, { url: `${signed.path}?list=true` }]) {
      expect(refusal(checkForwarded(received(signed, change), signer, new ForwardNonces())), JSON.stringify(change)).to.equal('the MAC does not verify');
    }
  });

  it('refuses another vouched address, and headers signed under another key', () => {
    const signed = signForward(fromClient, key);
    expect(refusal(checkForwarded(received(signed, { headers: { 'x-keywarden-forwarded-for': '10.9.9.9' } }), signer, new ForwardNonces()))).to.equal('the MAC does not verify');
    expect(refusal(checkForwarded(received(signed), { key: () => randomBytes(32) }, new ForwardNonces()))).to.equal('the MAC does not verify');
  });

  it('accepts a nonce once', () => {
    const nonces = new ForwardNonces();
    const wire = received(signForward(fromClient, key));
    accepted(checkForwarded(wire, signer, nonces));
    expect(refusal(checkForwarded(wire, signer, nonces))).to.equal('its nonce was used before');
  });

  it('does not spend the nonce of a request that fails its MAC', () => {
    const nonces = new ForwardNonces();
    const signed = signForward(fromClient, key);
    expect(refusal(checkForwarded(received(signed, { headers: { 'x-vault-token': 'hvs.thief' } }), signer, nonces))).to.equal('the MAC does not verify');
    expect(accepted(checkForwarded(received(signed), signer, nonces)).remoteAddress).to.equal('203.0.113.7');
  });

  it('refuses a request signed more than 60 s before or after the receiving node\'s clock', () => {
    const now = Date.now();
    for (const at of [now - 60_001, now + 60_001]) {
      expect(refusal(checkForwarded(received(signForward(fromClient, key, at)), signer, new ForwardNonces(), now))).to.match(/60 s/);
    }
    accepted(checkForwarded(received(signForward(fromClient, key, now - 59_000)), signer, new ForwardNonces(), now));
  });

  it('refuses forwarding headers that are missing or malformed', () => {
    const signed = signForward(fromClient, key);
    expect(refusal(checkForwarded(received(signed, { headers: { 'x-keywarden-forwarded-nonce': undefined } }), signer, new ForwardNonces()))).to.equal('a forwarding header is missing');
    expect(refusal(checkForwarded({ ...fromClient, headers: { 'x-keywarden-forwarded-for': '10.9.9.9' } }, signer, new ForwardNonces()))).to.equal('a forwarding header is missing');
    for (const headers of [{ 'x-keywarden-forwarded-at': 'soon' }, { 'x-keywarden-forwarded-nonce': 'x'.repeat(32) }, { 'x-keywarden-forwarded-mac': 'ab' }]) {
      expect(refusal(checkForwarded(received(signed, { headers }), signer, new ForwardNonces())), JSON.stringify(headers)).to.equal('a forwarding header is malformed');
    }
  });

  it('sends on a body with numbers JSON.parse would change as the client wrote it, every digit kept', () => {
    const text = '{"data":{"big":12345678901234567891,"huge":1e400,"small":1.5}}';
    const write: HostRequest = { ...fromClient, path: 'kv/data/app', body: keepExactText(JSON.parse(text) as object, text) };
    const signed = signForward(write, key);
    expect(signed.body?.toString('utf8')).to.equal(text);
    accepted(checkForwarded(received(signed), signer, new ForwardNonces()));
  });

  it('signs a LIST as the GET with list=true the active node receives, without the LIST marker', () => {
    const list: HostRequest = { ...fromClient, method: 'LIST', body: undefined, headers: { 'x-vault-token': 'hvs.victim', 'x-keywarden-method': 'LIST' } };
    const signed = signForward(list, key);
    expect(signed).to.deep.include({ method: 'GET', body: undefined });
    expect(signed.path).to.equal('/v1/sys/policies/acl/a%20b?list=true');
    const request = accepted(checkForwarded(received(signed), signer, new ForwardNonces()));
    expect(request.headers).to.deep.equal({ 'x-vault-token': 'hvs.victim' });
    expect(request.query).to.deep.equal({ list: 'true' });
  });
});

describe('HA request forwarding: the nonces a node remembers', () => {
  it('forgets a nonce once its request has aged out', () => {
    const nonces = new ForwardNonces();
    expect(nonces.claim('a', 1000, 0)).to.equal(true);
    expect(nonces.claim('a', 1000, 999)).to.equal(false);
    expect(nonces.claim('b', 3000, 1000)).to.equal(true);
    expect(nonces.claim('a', 4000, 1001)).to.equal(true);
  });

  it('refuses a new nonce rather than forget one early when full, and takes new ones again as old ones age out', () => {
    const nonces = new ForwardNonces(2);
    nonces.claim('a', 100, 0);
    nonces.claim('b', 200, 0);
    expect(() => nonces.claim('c', 300, 50)).to.throw(UnavailableError, /retry/);
    expect(nonces.claim('a', 100, 50), 'a remembered nonce is still refused when full').to.equal(false);
    expect(nonces.claim('c', 300, 100)).to.equal(true);
  });
});
