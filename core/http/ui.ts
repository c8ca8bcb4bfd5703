/**
 * The operator web UI's files (built by scripts/build-ui.js into build/ui): `index.html` for every
 * page under `/ui/`, and the hashed assets under `/ui/assets/`. Everything is read into memory once,
 * with the brotli and gzip copies the build made, so serving touches no disk and takes no path
 * from the client to the file system.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';

/**
 * No inline script or style, nothing from another origin, no framing, no `<base>`, forms post only
 * to the server itself. The UI talks only to `/v1/` on its own origin (`connect-src 'self'`).
 */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Asset names carry a content hash, so a browser may keep them for a year without asking again. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

interface UiFile {
  readonly type: string;
  readonly body: Buffer;
  readonly br?: Buffer;
  readonly gzip?: Buffer;
}

/** The built UI, loaded from disk once. */
export class UiFiles {
  private constructor(
    private readonly index: UiFile,
    private readonly assets: ReadonlyMap<string, UiFile>,
  ) {}

  /** Where `npm run build:ui` writes the UI: build/ui beside dist/, from dist/core/http. */
  static readonly defaultDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../build/ui');

  /** @throws Error naming the directory and the build command when the UI was not built. */
  static load(directory = UiFiles.defaultDirectory): UiFiles {
    const read = (file: string): UiFile => ({
      type: TYPES[path.extname(file)] ?? 'application/octet-stream',
      body: readFileSync(file),
      ...optional('br', file + '.br'),
      ...optional('gzip', file + '.gz'),
    });
    let index: UiFile;
    try {
      index = read(path.join(directory, 'index.html'));
    } catch {
      throw new Error(`ui is on but the web UI is not built (no ${path.join(directory, 'index.html')}); run npm run build:ui`);
    }
    const assets = new Map<string, UiFile>();
    for (const name of readdirSync(path.join(directory, 'assets'))) {
      if (name.endsWith('.br') || name.endsWith('.gz')) continue;
      assets.set(name, read(path.join(directory, 'assets', name)));
    }
    return new UiFiles(index, assets);
  }

  /**
   * Answers `/`, `/ui` and everything under `/ui/`; returns false for any other path. Unknown
   * assets are 404; any other page under `/ui/` is the app's index, whose router shows the page.
   */
  serve(ctx: Koa.Context): boolean {
    if (ctx.path === '/' || ctx.path === '/ui') {
      ctx.set('Location', '/ui/');
      ctx.set('Cache-Control', 'no-store');
      empty(ctx, 307);
      return true;
    }
    if (!ctx.path.startsWith('/ui/')) return false;
    setSecurityHeaders(ctx);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      empty(ctx, 405);
      return true;
    }
    if (ctx.path.startsWith('/ui/assets/')) {
      const asset = this.assets.get(ctx.path.slice('/ui/assets/'.length));
      if (!asset) {
        ctx.set('Cache-Control', 'no-store');
        empty(ctx, 404);
        return true;
      }
      sendFile(ctx, asset, IMMUTABLE);
      return true;
    }
    // The index names the current hashed assets, so a browser must check it on every load.
    sendFile(ctx, this.index, 'no-cache');
    return true;
  }
}

function optional(key: 'br' | 'gzip', file: string): Partial<Record<'br' | 'gzip', Buffer>> {
  try {
    return { [key]: readFileSync(file) };
  } catch {
    return {};
  }
}

/** A bodiless answer; the status is set after the body, since koa turns a null body into 204. */
function empty(ctx: Koa.Context, status: number): void {
  ctx.body = null;
  ctx.status = status;
}

function setSecurityHeaders(ctx: Koa.Context): void {
  ctx.set('Content-Security-Policy', UI_CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
}

function sendFile(ctx: Koa.Context, file: UiFile, cacheControl: string): void {
  ctx.status = 200;
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Content-Type', file.type);
  ctx.vary('Accept-Encoding');
  // The smallest copy the client takes: brotli, then gzip, then the file as it is.
  const encoding = file.br && ctx.acceptsEncodings('br') === 'br' ? 'br' : file.gzip && ctx.acceptsEncodings('gzip') === 'gzip' ? 'gzip' : undefined;
  if (encoding) ctx.set('Content-Encoding', encoding);
  ctx.body = encoding === 'br' ? file.br : encoding === 'gzip' ? file.gzip : file.body;
}
