import { expect } from 'chai';
import { brotliDecompressSync } from 'node:zlib';
import { request } from '../../helpers/http.js';
import { startTestServer } from '../../helpers/server.js';
import { UI_CONTENT_SECURITY_POLICY } from '../../../core/http/ui.js';
import type { RunningServer } from '../../../core/server.js';

describe('the web UI over HTTP (core/http/ui.ts)', () => {
  describe('with ui on', () => {
    let server: RunningServer;
    let base: string;
    before(async () => {
      server = await startTestServer({ ui: true });
      base = server.address;
    });
    after(() => server.close());

    it('redirects / and /ui to /ui/', async () => {
      for (const path of ['/', '/ui']) {
        const res = await request(base, 'GET', path);
        expect(res.status, path).to.equal(307);
        expect(res.headers.location).to.equal('/ui/');
      }
    });

    it('sends the index with a strict CSP, no inline script, and no caching', async () => {
      const res = await request(base, 'GET', '/ui/');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(res.headers['cache-control']).to.equal('no-cache');
      const csp = res.headers['content-security-policy'] as string;
      expect(csp).to.equal(UI_CONTENT_SECURITY_POLICY);
      for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"]) {
        expect(csp).to.contain(directive);
      }
      expect(csp).not.to.contain('unsafe-inline');
      expect(csp).not.to.contain('unsafe-eval');
      expect(res.headers['x-frame-options']).to.equal('DENY');
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.headers['referrer-policy']).to.equal('no-referrer');
      // Every script is an external file of this origin; no inline script or style, no event-handler attribute.
      const scripts = [...res.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts).to.have.length(1);
      expect(scripts[0]![1]).to.match(/src="\/ui\/assets\/main-[A-Z0-9]+\.js"/);
      expect(scripts[0]![2]!.trim()).to.equal('');
      expect(res.text).not.to.match(/<style|\son[a-z]+=|style="/i);
    });

    it('answers any page under /ui/ with the index, so the app can route it', async () => {
      const res = await request(base, 'GET', '/ui/transit/keys');
      expect(res.status).to.equal(200);
      expect(res.text).to.contain('<div id="app">');
    });

    it('serves hashed assets immutable for a year, compressed when the client accepts it', async () => {
      const index = await request(base, 'GET', '/ui/');
      const script = /src="(\/ui\/assets\/[^"]+)"/.exec(index.text)![1]!;
      const style = /href="(\/ui\/assets\/[^"]+)"/.exec(index.text)![1]!;
      const plain = await request(base, 'GET', script);
      expect(plain.status).to.equal(200);
      expect(plain.headers['content-type']).to.equal('text/javascript; charset=utf-8');
      expect(plain.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
      expect(plain.headers['content-security-policy']).to.equal(UI_CONTENT_SECURITY_POLICY);
      expect(plain.headers['content-encoding']).to.equal(undefined);
      const css = await request(base, 'GET', style);
      expect(css.headers['content-type']).to.equal('text/css; charset=utf-8');

      const br = await new Promise<Buffer>((resolve, reject) => {
        import('node:http').then(({ get }) => {
          const url = new URL(script, base);
          get({ host: url.hostname, port: url.port, path: url.pathname, headers: { 'Accept-Encoding': 'gzip, br' } }, (res) => {
            expect(res.headers['content-encoding']).to.equal('br');
            expect(res.headers.vary).to.match(/Accept-Encoding/i);
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks)));
          }).on('error', reject);
        }, reject);
      });
      expect(brotliDecompressSync(br).toString('utf8')).to.equal(plain.text);
    });

    it('answers 404 for an unknown asset, and 405 for a method other than GET or HEAD', async () => {
      expect((await request(base, 'GET', '/ui/assets/main-NOPE.js')).status).to.equal(404);
      expect((await request(base, 'GET', '/ui/assets/..%2F..%2Fpackage.json')).status).to.equal(404);
      const post = await request(base, 'POST', '/ui/', { body: {} });
      expect(post.status).to.equal(405);
      expect(post.headers.allow).to.equal('GET, HEAD');
    });

    it('leaves the API as it was', async () => {
      const res = await request(base, 'GET', '/v1/sys/seal-status');
      expect(res.status).to.equal(200);
      expect(res.headers['content-security-policy']).to.equal(undefined);
      expect(res.body.initialized).to.equal(false);
    });
  });

  describe('with ui off (the default)', () => {
    let server: RunningServer;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.close());

    it('serves no UI and does not redirect /', async () => {
      expect((await request(server.address, 'GET', '/ui/')).status).to.equal(404);
      const root = await request(server.address, 'GET', '/');
      expect(root.status).to.equal(404);
      expect(root.headers.location).to.equal(undefined);
    });
  });
});
