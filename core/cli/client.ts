/**
 * The CLI's HTTP client: the address from flags or KEYWARDEN_* or VAULT_* variables, the token as
 * token-file.ts finds it; TLS from the settings in tls.ts; errors typed so the CLI can pick its exit
 * code (see main.ts) and word a failure to connect as one line that says what to do about it.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The server answered with an error status. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
    /** The API path asked for (without /v1/). */
    readonly path: string,
    readonly method: string,
    readonly url: string,
    /** The parsed answer, when it was JSON. */
    readonly body?: unknown,
  ) {
    // Vault's own wording, which scripts and people already recognise.
    super(`Error making API request.\n\nURL: ${method} ${url}\nCode: ${status}. Errors:\n\n${errors.map((e) => `* ${e}`).join('\n') || '* (none)'}`);
  }
}

/**
 * A 403 whose cause the CLI worked out (no token, a token the server does not accept, or a policy
 * that does not allow the request), worded as what happened and what to do.
 */
export class TokenRefusalError extends RequestError {
  constructor(cause: RequestError, message: string) {
    super(cause.status, cause.errors, cause.path, cause.method, cause.url, cause.body);
    this.message = message;
  }
}

/** The server could not be reached, or the TLS handshake with it failed. */
export class ConnectionError extends Error {}

/** Wrong use of the command line. */
export class UsageError extends Error {}

/** The client cannot be set up: an address that is not a URL, a TLS file that cannot be used. */
export class ClientSetupError extends Error {}

/** What a command prints on failure, as is, and the exit code it ends with. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface CliEnvironment {
  readonly env: NodeJS.ProcessEnv;
}

export function serverAddress(env: NodeJS.ProcessEnv): string {
  return (env.KEYWARDEN_ADDR || env.VAULT_ADDR || 'http://127.0.0.1:8200').replace(/\/+$/, '');
}

export interface ApiResponse {
  readonly status: number;
  readonly body: any;
}

/** Login paths (auth/<mount>/login[/<role>]) need no token: a 403 there is the login refused. */
const LOGIN_PATH = /^\/*auth\/.+\/login(\/[^/]*)?$/;

/** Vault's client timeout. */
const REQUEST_TIMEOUT_MS = 60_000;

/** Node's codes for a certificate the client does not trust. */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
]);

/** One line on why a request never got an answer, and what the user can do about it. */
function explainConnectionFailure(err: NodeJS.ErrnoException & { reason?: string }, url: URL): string {
  const code = err.code ?? '';
  const secure = url.protocol === 'https:';
  if (code === 'ECONNREFUSED') return `connection refused: is the server running and listening at ${url.host}?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot resolve the host name ${url.hostname}`;
  if (code === 'ETIMEDOUT') return `no answer within ${REQUEST_TIMEOUT_MS / 1000}s`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the server's certificate is not valid for this address (${err.reason ?? err.message}): use an address the certificate names, or -tls-server-name (VAULT_TLS_SERVER_NAME) with a name it holds`;
  }
  if (UNTRUSTED_CERTIFICATE.has(code)) {
    return `the server's certificate is not trusted (${err.message}): give its CA with -ca-cert or VAULT_CACERT (-tls-skip-verify turns the check off)`;
  }
  // Node reports some TLS failures only as EPROTO, naming OpenSSL's reason in the message.
  const tlsReason = `${code} ${code === 'EPROTO' ? err.message.toUpperCase().replace(/ /g, '_') : ''}`;
  if (secure && /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST/.test(tlsReason)) {
    return `the server did not answer with TLS: it probably listens for plain http (use an http:// address)`;
  }
  if (secure && /ALERT_CERTIFICATE_REQUIRED|ALERT_HANDSHAKE_FAILURE|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA/.test(tlsReason)) {
    return `the server refused the TLS handshake (${tlsReason.trim()}): it may require a client certificate it trusts (-client-cert and -client-key, or VAULT_CLIENT_CERT and VAULT_CLIENT_KEY)`;
  }
  if (code === 'ECONNRESET') {
    return secure
      ? `the server closed the connection without answering, during or right after the TLS handshake: it may want a client certificate it trusts (-client-cert and -client-key)`
      : `the server closed the connection without answering: if it listens for https, use an https:// address`;
  }
  return err.message.replace(/\s+/g, ' ').trim() || code;
}

export class ApiClient {
  private readonly agent: http.Agent;

  /**
   * @param address the server's URL (http:// or https://).
   * @param tls options for the https agent (trusted CAs, client certificate, server name).
   * @throws ClientSetupError when the address is not an http(s) URL.
   */
  /** Sent as X-Vault-Wrap-TTL (`-wrap-ttl`): the server answers with a wrapping token instead. */
  wrapTtl: string | undefined;

  /** Where the token came from, for messages: "from VAULT_TOKEN", "from ~/.keywarden-token", "given". */
  tokenSource = 'given';

  constructor(
    readonly address: string,
    public token: string | undefined,
    tls: https.AgentOptions = {},
  ) {
    let protocol: string;
    try {
      protocol = new URL(address).protocol;
    } catch {
      throw new ClientSetupError(`the address "${address}" is not a URL: use http://HOST:PORT or https://HOST:PORT`);
    }
    if (protocol !== 'http:' && protocol !== 'https:') throw new ClientSetupError(`the address "${address}" must start with http:// or https://`);
    this.agent = protocol === 'https:' ? new https.Agent(tls) : new http.Agent({ keepAlive: false });
  }

  /** @param contentType of the body: JSON, or JSON merge patch for PATCH. */
  async request(method: string, apiPath: string, body?: unknown, query?: Record<string, string>, contentType = 'application/json'): Promise<ApiResponse> {
    const url = new URL(`${this.address}/v1/${apiPath.replace(/^\/+/, '')}`);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    const { status, text } = await this.send(method, url, body === undefined ? undefined : JSON.stringify(body), contentType, this.wrapTtl);
    try {
      return answerOf(status, text, apiPath, method, url);
    } catch (err) {
      throw await this.explainRefusal(err);
    }
  }

  /**
   * A 403 on a path that needs a token says "permission denied" whether the token is missing,
   * unknown to the server (mistyped, expired, revoked) or valid but not allowed this path, as Vault's
   * does. The CLI tells them apart, asking the server about the token (auth/token/lookup-self, which
   * the default policy allows) only once a request was refused, and says what to do.
   */
  private async explainRefusal(err: unknown): Promise<unknown> {
    if (!(err instanceof RequestError) || err.status !== 403 || LOGIN_PATH.test(err.path)) return err;
    if (!this.token) {
      return new TokenRefusalError(
        err,
        'no token: this request needs one, and none was found in KEYWARDEN_TOKEN, VAULT_TOKEN or the token file. ' +
          'Log in with "keywarden login" (which keeps the token in the token file), or set VAULT_TOKEN (or KEYWARDEN_TOKEN).',
      );
    }
    let self: { status: number; text: string };
    try {
      self = await this.send('GET', this.url('auth/token/lookup-self'), undefined, 'application/json', undefined);
    } catch {
      return err;
    }
    if (self.status === 403) {
      return new TokenRefusalError(
        err,
        `${err.message}\n\nThe server does not accept the token ${this.tokenSource}: it is mistyped, expired or revoked. ` +
          'Log in again with "keywarden login", or set VAULT_TOKEN (or KEYWARDEN_TOKEN) to a valid token.',
      );
    }
    const policies = self.status === 200 ? (answerOf(self.status, self.text, 'auth/token/lookup-self', 'GET', this.url('auth/token/lookup-self')).body?.data?.policies as unknown) : undefined;
    if (!Array.isArray(policies)) return err;
    const names = policies.map(String).join(', ');
    return new TokenRefusalError(err, `${err.message}\n\nThe token ${this.tokenSource} is valid, but its policies (${names}) do not allow ${err.method} on ${err.path}.`);
  }

  /**
   * A GET whose answer is bytes (a snapshot), written to `sink` as they arrive; `onBytes` is told
   * of each piece. An error answer throws RequestError; an answer cut short throws ConnectionError.
   */
  async download(apiPath: string, sink: Writable, onBytes: (n: number) => void = () => undefined): Promise<void> {
    const url = this.url(apiPath);
    await this.stream('GET', url, undefined, async (res) => {
      res.on('data', (chunk: Buffer) => onBytes(chunk.length));
      try {
        await pipeline(res, sink);
      } catch (err) {
        throw new ConnectionError(`GET ${url.href}: the answer ended before it was complete (${(err as Error).message})`);
      }
    }).catch(async (err: unknown) => {
      throw await this.explainRefusal(err);
    });
  }

  /**
   * A POST whose body is `size` bytes read from `source` (a snapshot file); `onBytes` is told of
   * each piece sent. Answers as `request` does.
   */
  upload(apiPath: string, source: Readable, size: number, onBytes: (n: number) => void = () => undefined): Promise<ApiResponse> {
    source.on('data', (chunk: Buffer) => onBytes(chunk.length));
    return this.stream('POST', this.url(apiPath), { source, size }, async () => undefined).catch(async (err: unknown) => {
      throw await this.explainRefusal(err);
    });
  }

  /**
   * A GET whose answer is text that goes on until the server ends it (sys/monitor), written to
   * `sink` as it arrives, with no idle time-out: a quiet log is not a dead server.
   */
  async follow(apiPath: string, query: Record<string, string>, sink: Writable): Promise<void> {
    const url = this.url(apiPath);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    await this.stream('GET', url, undefined, async (res) => {
      try {
        await pipeline(res, sink, { end: false });
      } catch (err) {
        throw new ConnectionError(`GET ${url.href}: the stream broke off (${(err as Error).message})`);
      }
    }, 'text/plain').catch(async (err: unknown) => {
      throw await this.explainRefusal(err);
    });
  }

  private url(apiPath: string): URL {
    return new URL(`${this.address}/v1/${apiPath.replace(/^\/+/, '')}`);
  }

  /**
   * One request with a streamed body or answer; an answer outside 2xx is read whole and thrown as
   * RequestError. `text/plain`: the answer is a text stream of no set length, with no time-out.
   */
  private stream(
    method: string,
    url: URL,
    body: { readonly source: Readable; readonly size: number } | undefined,
    onSuccess: (res: http.IncomingMessage) => Promise<void>,
    streamed: 'application/octet-stream' | 'text/plain' = 'application/octet-stream',
  ): Promise<ApiResponse> {
    const transport = url.protocol === 'https:' ? https : http;
    const apiPath = url.pathname.replace(/^\/v1\//, '');
    return new Promise((resolve, reject) => {
      const fail = (err: NodeJS.ErrnoException) => reject(new ConnectionError(`${method} ${url.href}: ${explainConnectionFailure(err, url)}`));
      const req = transport.request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            ...(this.token ? { 'X-Vault-Token': this.token } : {}),
            ...(body ? { 'Content-Type': 'application/octet-stream', 'Content-Length': body.size } : {}),
            'X-Vault-Request': 'true',
          },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300 && res.headers['content-type']?.split(';')[0] === streamed) {
            onSuccess(res).then(() => resolve({ status, body: undefined }), reject);
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', fail);
          res.on('end', () => {
            try {
              resolve(answerOf(status, Buffer.concat(chunks).toString('utf8'), apiPath, method, url));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      if (streamed !== 'text/plain') req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', fail);
      if (!body) {
        req.end();
        return;
      }
      // The server may answer (a refused token) before it has read the body, and close: that answer wins.
      body.source.on('error', (err) => req.destroy(err));
      body.source.pipe(req);
    });
  }

  private send(method: string, url: URL, payload: string | undefined, contentType: string, wrapTtl: string | undefined): Promise<{ status: number; text: string }> {
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            ...(this.token ? { 'X-Vault-Token': this.token } : {}),
            ...(wrapTtl ? { 'X-Vault-Wrap-TTL': wrapTtl } : {}),
            ...(payload !== undefined ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) } : {}),
            'X-Vault-Request': 'true',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (err) => reject(new ConnectionError(`${method} ${url.href}: ${explainConnectionFailure(err, url)}`)));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', (err) => reject(new ConnectionError(`${method} ${url.href}: ${explainConnectionFailure(err, url)}`)));
      req.end(payload);
    });
  }

  read(p: string, query?: Record<string, string>) {
    return this.request('GET', p, undefined, query);
  }

  /**
   * A read as `vault read` takes it: a 404 that carries no data and no warnings means there is
   * nothing at the path (undefined), not an error.
   */
  async readOptional(p: string, query?: Record<string, string>): Promise<ApiResponse | undefined> {
    try {
      return await this.read(p, query);
    } catch (err) {
      return absentOn404(err);
    }
  }

  write(p: string, body: unknown = {}) {
    return this.request('PUT', p, body);
  }
  list(p: string) {
    return this.request('GET', p, undefined, { list: 'true' });
  }

  /** A list as `vault list` takes it: undefined when there is nothing at the path (see readOptional). */
  async listOptional(p: string): Promise<ApiResponse | undefined> {
    try {
      return await this.list(p);
    } catch (err) {
      return absentOn404(err);
    }
  }

  delete(p: string) {
    return this.request('DELETE', p);
  }

  /** A PATCH with a JSON merge patch, the only kind the server takes. */
  patch(p: string, body: unknown) {
    return this.request('PATCH', p, body, undefined, 'application/merge-patch+json');
  }
}

function absentOn404(err: unknown): ApiResponse | undefined {
  if (!(err instanceof RequestError) || err.status !== 404) throw err;
  const body = err.body as { data?: unknown; warnings?: unknown } | undefined;
  const hasData = body?.data !== null && typeof body?.data === 'object' && Object.keys(body.data as object).length > 0;
  const hasWarnings = Array.isArray(body?.warnings) && body.warnings.length > 0;
  return hasData || hasWarnings ? { status: 404, body } : undefined;
}

/**
 * The lines an error answer is shown with: its errors; for a JSON answer without any (kv version 2's
 * 404 for a path outside data/ carries only a warning), its warnings; for an answer that is not
 * JSON (a proxy's page), the start of its text.
 */
function errorLines(parsed: unknown, text: string): string[] {
  if (parsed !== null && typeof parsed === 'object') {
    const { errors, warnings } = parsed as { errors?: unknown; warnings?: unknown };
    if (Array.isArray(errors) && errors.length > 0) return errors.map(String);
    return Array.isArray(warnings) ? warnings.map(String) : [];
  }
  return text ? [text.slice(0, 500)] : [];
}

/** An answer's body as JSON (undefined when empty or not JSON); outside 2xx, a RequestError with its errors. */
function answerOf(status: number, text: string, apiPath: string, method: string, url: URL): ApiResponse {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (status < 200 || status >= 300) {
    throw new RequestError(status, errorLines(parsed, text), apiPath, method, url.toString(), parsed);
  }
  return { status, body: parsed };
}
