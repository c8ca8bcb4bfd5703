/**
 * The HTTP face of the host (koa + @koa/router): every route under `/v1/`, body reading and the
 * size limit, then the host's pipeline; answers in Vault's envelope with exactly
 * `Content-Type: application/json` and `Cache-Control: no-store`. With the UI on, `/ui/` serves
 * its files (ui.ts).
 */
import { Readable } from 'node:stream';
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import type { BodyAllowance, Host, HostResponse } from '../host.js';
import { BadRequestError, DeadlineExceededError, httpStatusOf, publicMessageOf } from '../errors.js';
import { RELEASE_BYTES, releaseBuffer } from '../buffer-release.js';
import { DEFAULT_MAX_REQUEST_SIZE, DEFAULT_MAX_UNAUTHENTICATED_REQUEST_SIZE, parseBody, readBody, type BodyLimit } from './body.js';
import { jsonBody } from './json-pieces.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';
import { listedMethod, ListVerbStream } from './list-method.js';
import { FORWARDED_MAC } from '../ha/forward.js';
import type { UiFiles } from './ui.js';
import { corsAnswer, type CorsSettings } from './cors.js';

export interface AppOptions {
  /** Bytes; negative turns the limit off. */
  readonly maxRequestSize?: number;
  /** Bytes of a body to a path that needs no token (body-allowance.ts); never more than maxRequestSize. */
  readonly maxUnauthenticatedRequestSize?: number;
  /** The listener's limits on a JSON body's shape (json-limits.ts). */
  readonly jsonLimits?: JsonLimits;
  /** The listener's `max_request_duration`, milliseconds (core/pipeline/deadline.ts). */
  readonly maxRequestDurationMs?: number;
  readonly logger: Logger;
  /** The web UI, served at `/ui/` (with `/` redirected there) when the configuration turns it on. */
  readonly ui?: UiFiles;
  /** `telemetry { unauthenticated_metrics_access }` of this listener. */
  readonly unauthenticatedMetrics?: boolean;
  /** A worker's forwarding socket, which only the other workers of its server reach (core/cluster/). */
  readonly siblingSocket?: boolean;
}

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD']);

/** What the HTTP layer asks of the host: nothing else, so a stand-in host (bench/lib/app-echo.ts) is typed by the same list. */
export type AppHost = Pick<Host, 'takesBinaryBody' | 'bodyAllowance' | 'handle'> & { readonly cors: Pick<CorsSettings, 'cached' | 'get'> };

export function createApp(host: AppHost, options: AppOptions): Koa {
  const app = new Koa();
  // Koa prints errors of connections that end badly (a client cut off by a timeout, a reset) to
  // stderr; they are the client's doing, so they go to the structured log instead.
  app.on('error', (err: Error) => options.logger.debug({ err: err.message }, 'connection ended with an error'));
  const router = new Router();
  const limit = options.maxRequestSize ?? DEFAULT_MAX_REQUEST_SIZE;
  const unauthenticatedLimit = Math.min(
    options.maxUnauthenticatedRequestSize || DEFAULT_MAX_UNAUTHENTICATED_REQUEST_SIZE,
    limit >= 0 ? limit : Number.MAX_SAFE_INTEGER,
  );
  const limits: Record<Exclude<BodyAllowance, 'none'>, BodyLimit> = {
    authenticated: { bytes: limit, setting: 'max_request_size' },
    unauthenticated: { bytes: unauthenticatedLimit, setting: 'max_unauthenticated_request_size' },
  };
  const unauthenticatedMetrics = options.unauthenticatedMetrics === true;
  const jsonLimits = options.jsonLimits ?? DEFAULT_JSON_LIMITS;

  app.use((ctx, next) => {
    // The request log line is built only when debug logging is on (it parses the URL and times the request).
    if (options.logger.isLevelEnabled('debug')) {
      const started = process.hrtime.bigint();
      ctx.res.on('finish', () => {
        options.logger.debug(
          { method: ctx.method, path: ctx.path, status: ctx.status, ms: Number(process.hrtime.bigint() - started) / 1e6 },
          'request',
        );
      });
    }
    return next();
  });

  // CORS (cors.ts): a request without Origin, or with CORS off, costs a header lookup and one
  // check of the cached setting; the setting is read from storage once after each unseal.
  app.use(async (ctx, next) => {
    const origin = ctx.headers.origin;
    // Sealed, the setting cannot be read: nothing is served that it would govern.
    const cors = origin !== undefined && ctx.path.startsWith('/v1/') ? (host.cors.cached() ?? (await host.cors.get().catch(() => undefined))) : undefined;
    if (origin !== undefined && cors?.enabled) {
      const answer = corsAnswer(cors, origin, ctx.method, ctx.get('access-control-request-method') || undefined);
      if (answer === 'method-not-allowed') return send(ctx, { status: 405, body: { errors: ['the preflight asks for a method CORS does not allow'] } });
      if (answer.kind === 'refuse') return send(ctx, { status: 403, body: { errors: ['origin not allowed'] } });
      ctx.set(answer.headers);
      if (answer.kind === 'preflight') return send(ctx, { status: 204 });
    }
    await next();
  });

  router.all('/v1/{*path}', async (ctx) => {
    let response: HostResponse;
    let streamed = false;
    let unread = false;
    let raw: Buffer | undefined;
    try {
      const method = listedMethod(ctx.method, ctx.req.headers);
      const path = decodePath(ctx.path.slice('/v1/'.length));
      const headers = ctx.headers;
      const remoteAddress = ctx.req.socket.remoteAddress ?? '';
      // A snapshot's bytes go to the handler unread, once the request is authorized; no size limit
      // applies (snapshots outgrow any sensible one), and only a sudo token gets that far.
      streamed = !METHODS_WITHOUT_BODY.has(ctx.method) && host.takesBinaryBody(path);
      if (!METHODS_WITHOUT_BODY.has(ctx.method) && !streamed) {
        let allowance = host.bodyAllowance({ path, headers, remoteAddress, unauthenticatedMetrics });
        if (allowance instanceof Promise) allowance = await allowance;
        if (allowance === 'none') unread = true;
        else raw = await readBody(ctx.req, limits[allowance]);
      }
      let body = raw === undefined ? undefined : parseBody(raw, ctx.get('content-type'), jsonLimits);
      if (body instanceof Promise) body = (await body) as unknown;
      const query: Record<string, string> = {};
      if (ctx.querystring !== '') {
        for (const [key, value] of Object.entries(ctx.query)) {
          const first = Array.isArray(value) ? value[0] : value;
          if (first !== undefined) query[key] = first;
        }
      }
      response = await host.handle({
        method,
        path,
        query,
        body,
        headers,
        remoteAddress,
        // A standby's MAC covers the exact bytes it sent; no other request keeps them.
        rawBody: ctx.headers[FORWARDED_MAC] === undefined ? undefined : raw,
        bodyStream: streamed ? ctx.req : undefined,
        unauthenticatedMetrics,
        ...(options.siblingSocket ? { fromSibling: true } : {}),
        ...(options.maxRequestDurationMs !== undefined ? { maxDurationMs: options.maxRequestDurationMs } : {}),
      });
    } catch (err) {
      response = { status: httpStatusOf(err), body: { errors: [publicMessageOf(err)] } };
    }
    // A body left unread (too large, refused before the handler read it, or before it was
    // authenticated) is not drained: the connection ends once the answer is out (closeUnread).
    if ((streamed || unread || response.status === 413) && !ctx.req.readableEnded) closeUnread(ctx);
    // The body's bytes (which a large string of it is read from in place: core/large-text.ts) are
    // given back once the answer is out, unless the deadline left the handler running: it may
    // still read them.
    if (raw !== undefined && response.status !== DeadlineExceededError.status) giveBackWhenSent(ctx, [raw]);
    return send(ctx, response);
  });

  app.use(router.routes());
  // The UI comes after the API's routes, so an API request never passes through it.
  const ui = options.ui;
  app.use(async (ctx) => (ui?.serve(ctx) ? undefined : send(ctx, { status: 404, body: { errors: [] } })));
  return app;
}

/**
 * How long a connection whose body is left unread stays open once its answer went out, so the client
 * reads the answer before the connection is reset (a close with unread bytes pending resets it).
 */
const LINGER_MS = 1000;

/**
 * Ends a connection whose request body was not read, without reading it: Node would otherwise
 * read and discard the rest of the body — all 28 MB of an upload refused by its Content-Length —
 * costing the server as much as the client cares to send. The socket stops being read once the
 * answer is out (the client's writes then wait on TCP's window) and is closed after LINGER_MS.
 */
function closeUnread(ctx: Koa.Context): void {
  ctx.set('Connection', 'close');
  ctx.res.once('finish', () => {
    const socket = ctx.req.socket;
    if (socket instanceof ListVerbStream) socket.stopReading();
    else socket.pause();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestError('the request path is not valid percent-encoding');
  }
}

/** Sets the answer: at once, or, for a large body, once its JSON has been made in pieces (jsonBody). */
function send(ctx: Koa.Context, response: HostResponse): void | Promise<void> {
  ctx.status = response.status;
  ctx.set('Cache-Control', 'no-store');
  // Every answer is data, never a page: a browser must not guess otherwise (the UI is served apart).
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (response.headers) ctx.set(response.headers);
  if (response.binary) {
    ctx.set('Content-Type', response.contentType ?? 'application/octet-stream');
    if (ctx.method === 'HEAD') {
      ctx.body = null;
      return;
    }
    // A failure part way (the server sealed) destroys the response (koa pipes a stream body with
    // stream.pipeline): the client sees an incomplete answer, which a restore refuses.
    ctx.body = Readable.from(response.binary, { objectMode: false });
    // A text stream (sys/monitor) may wait long for its first line: the client has the answer's head at once.
    if (response.contentType) ctx.res.flushHeaders();
    return;
  }
  if (response.body === undefined || ctx.method === 'HEAD') {
    if (ctx.method === 'HEAD' && response.body !== undefined) ctx.set('Content-Type', response.contentType ?? 'application/json');
    ctx.body = null;
    ctx.status = response.status;
    return;
  }
  if (response.contentType) {
    ctx.set('Content-Type', response.contentType);
    // RawResponse.contentType marks a body that is text (sys/metrics in the Prometheus format).
    ctx.body = response.body as string;
    return;
  }
  // Set as a raw header before the body: koa then keeps it as it is (its type setter would add
  // "; charset=utf-8", which hvac does not accept) and skips guessing a type for the Buffer.
  ctx.set('Content-Type', 'application/json');
  const body = jsonBody(response.body);
  if (!(body instanceof Promise)) {
    ctx.body = body;
    return;
  }
  return body.then(({ pieces, own }) => {
    ctx.body = Readable.from(pieces);
    ctx.length = pieces.reduce((total, piece) => total + piece.length, 0);
    giveBackWhenSent(ctx, own);
  });
}

/**
 * Gives back the memory of buffers of megabytes that only this answer holds once it has gone out
 * (core/buffer-release.ts), rather than at a garbage collection: when the response closes, every
 * piece has been handed to the socket or the connection is gone. An answer that closed already is
 * left to the collector.
 */
function giveBackWhenSent(ctx: Koa.Context, buffers: readonly Buffer[]): void {
  if (ctx.res.closed || !buffers.some((buffer) => buffer.length >= RELEASE_BYTES)) return;
  ctx.res.once('close', () => {
    for (const buffer of buffers) releaseBuffer(buffer);
  });
}
