/**
 * What request headers a backend receives: only those its mount lists in
 * `passthrough_request_headers`, never the caller's token (X-Vault-Token, X-Service-Token, or an
 * Authorization header carrying it), in-process and isolated alike; and a mount cannot be told to
 * pass a token header through.
 */
import { expect } from 'chai';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { echoSource, installModule } from '../../helpers/external-plugins.js';
import { TestClient } from '../../helpers/http.js';
import { FrameworkBackend, definePath, type PluginManifest } from '../../../sdk/index.js';
import { backendHeaders } from '../../../core/pipeline/backend-headers.js';

/** An in-process plugin that answers the request headers it was given, names and values. */
const headersPlugin: PluginManifest = {
  name: 'headers',
  kind: 'secret',
  version: '1.0.0',
  description: 'Reports the request headers it receives (test plugin).',
  factory: () =>
    new FrameworkBackend({
      description: 'Reports the request headers it receives (test plugin).',
      paths: [
        definePath({
          pattern: 'seen',
          fields: {},
          operations: { read: { summary: 'The headers of this request.', handler: async (req) => ({ data: { headers: { ...req.headers } } }) } },
          synopsis: 'Headers seen.',
          description: 'The request headers as the backend receives them.',
        }),
      ],
    }),
};

describe('request headers a backend receives', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  let root: TestClient;
  let anonymous: TestClient;
  let dir: { path: string; remove: () => Promise<void> };

  before(async () => {
    dir = await tempDir('keywarden-plugins-');
    server = await startUnsealedServer({ plugins: [headersPlugin], pluginDirectory: dir.path });
    root = server.client;
    anonymous = new TestClient(server.address);
    const sha256 = await installModule(dir.path, 'echo.mjs', echoSource());
    expect((await root.post('sys/plugins/catalog/secret/echo', { sha256, command: 'echo.mjs', version: 'v1.0.0' })).status).to.equal(204);
    expect((await root.post('sys/mounts/headers', { type: 'headers' })).status).to.equal(204);
    expect((await root.post('sys/mounts/echo', { type: 'echo' })).status).to.equal(204);
    expect((await root.post('sys/auth/cloud', { type: 'cloud' })).status).to.equal(204);
  });
  after(async () => {
    await server?.close();
    await dir?.remove();
  });

  const seen = async (client: TestClient, headers: Record<string, string>) => {
    const res = await client.get('headers/seen', { headers });
    expect(res.status, res.text).to.equal(200);
    return res.body.data.headers as Record<string, string>;
  };
  const tune = (mount: string, list: string[]) => root.post(`sys/mounts/${mount}/tune`, { passthrough_request_headers: list });

  it('gives a backend no request headers when its mount lists none', async () => {
    expect(await seen(root, { 'X-Custom': 'a', 'User-Agent': 'test' })).to.deep.equal({});
  });

  it('gives a backend only the headers its mount lists, never the token the caller sent', async () => {
    expect((await tune('headers', ['X-Custom'])).status).to.equal(204);
    expect(await seen(root, { 'X-Custom': 'a', 'X-Other': 'b', 'X-Service-Token': 'x' })).to.deep.equal({ 'x-custom': 'a' });
  });

  it('drops an Authorization header that carries the request\'s token, and passes any other', async () => {
    expect((await tune('headers', ['Authorization', 'X-Custom'])).status).to.equal(204);
    expect(await seen(anonymous, { Authorization: `Bearer ${server.rootToken}`, 'X-Custom': 'a' })).to.deep.equal({ 'x-custom': 'a' });
    expect(await seen(root, { Authorization: `Bearer ${server.rootToken}` })).to.deep.equal({});
    expect(await seen(root, { Authorization: 'Negotiate YIIB' })).to.deep.equal({ authorization: 'Negotiate YIIB' });
  });

  it('keeps the token out of an isolated plugin\'s request as well', async () => {
    expect((await tune('echo', ['Authorization', 'X-Custom'])).status).to.equal(204);
    const info = await anonymous.get('echo/info', { headers: { Authorization: `Bearer ${server.rootToken}`, 'X-Custom': 'a' } });
    expect(info.status, info.text).to.equal(200);
    expect(info.body.data.headers).to.deep.equal(['x-custom']);
    expect(info.body.data.token).to.equal(null);
  });

  describe('a mount cannot be told to pass a token header through', () => {
    for (const header of ['X-Vault-Token', 'x-service-token']) {
      it(`refuses ${header} in a tune of a secrets engine or an auth method, naming it`, async () => {
        for (const path of ['sys/mounts/headers/tune', 'sys/auth/cloud/tune']) {
          const res = await root.post(path, { passthrough_request_headers: ['X-Custom', header] });
          expect(res.status, path).to.equal(400);
          expect(res.body.errors[0]).to.match(/passthrough_request_headers: X-(Vault|Service)-Token carries the caller's token/);
        }
        expect((await root.get('sys/mounts/headers/tune')).body.data.passthrough_request_headers).to.not.include(header);
      });

      it(`refuses ${header} in the config of an enable, naming it, and mounts nothing`, async () => {
        const secret = await root.post('sys/mounts/more-headers', { type: 'headers', config: { passthrough_request_headers: header } });
        expect(secret.status).to.equal(400);
        expect(secret.body.errors[0]).to.contain('passthrough_request_headers');
        expect((await root.get('sys/mounts')).body.data).to.not.have.key('more-headers/');
        const auth = await root.post('sys/auth/cloud-two', { type: 'cloud', config: { passthrough_request_headers: [header] } });
        expect(auth.status).to.equal(400);
        expect(auth.body.errors[0]).to.contain('passthrough_request_headers');
        expect((await root.get('sys/auth')).body.data).to.not.have.key('cloud-two/');
      });
    }
  });

  it('filters a token header out even when a stored mount lists it (a mount table from before the refusal)', () => {
    const headers = { 'x-vault-token': 'hvs.root', 'x-service-token': 'hvs.root', authorization: 'Bearer hvs.root', 'x-custom': 'a' };
    expect(backendHeaders(headers, ['X-Vault-Token', 'X-Service-Token', 'Authorization', 'X-Custom'], 'hvs.root')).to.deep.equal({ 'x-custom': 'a' });
    expect(backendHeaders(headers, ['Authorization'], 'hvs.other')).to.deep.equal({ authorization: 'Bearer hvs.root' });
  });
});
