/**
 * A raw HTTP client for the reliability suite: the path and body go out byte for byte (so `..`,
 * encoded slashes and broken JSON reach the server as written), every request has a deadline (a
 * hang is a finding, not a stuck test), and TLS is available for the listener checks.
 */
import http from 'node:http';
import https from 'node:https';

export interface RawRequest {
  readonly method: string;
  /** Starts with `/`; sent as is. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** Parsed JSON, or undefined when the body is empty or not JSON. */
  readonly json: any;
  readonly ms: number;
}

/** The server did not answer within the deadline. */
export class HangError extends Error {}

export function send(baseUrl: string, req: RawRequest, options: { timeoutMs?: number; ca?: string | Buffer } = {}): Promise<RawResponse> {
  const base = new URL(baseUrl);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
  const started = Date.now();
  const transport = base.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(
      { host: base.hostname, port: base.port, path: req.path, method: req.method, headers, agent: false, ...(options.ca ? { ca: options.ca } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: Date.now() - started });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      },
    );
    const timer = setTimeout(() => {
      outgoing.destroy();
      reject(new HangError(`${req.method} ${req.path.slice(0, 200)}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    outgoing.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (req.body !== undefined) outgoing.write(req.body);
    outgoing.end();
  });
}

/** JSON requests with a token, for scenario code that only needs the API. */
export class Api {
  constructor(
    readonly baseUrl: string,
    public token?: string,
    private readonly timeoutMs = 30_000,
  ) {}

  request(method: string, path: string, body?: unknown, token = this.token): Promise<RawResponse> {
    return send(
      this.baseUrl,
      {
        method,
        path: path.startsWith('/') ? path : `/v1/${path}`,
        headers: { ...(token ? { 'X-Vault-Token': token } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      },
      { timeoutMs: this.timeoutMs },
    );
  }
  get(path: string, token?: string) {
    return this.request('GET', path, undefined, token);
  }
  list(path: string, token?: string) {
    return this.request('LIST', path, undefined, token);
  }
  post(path: string, body: unknown = {}, token?: string) {
    return this.request('POST', path, body, token);
  }
  delete(path: string, token?: string) {
    return this.request('DELETE', path, undefined, token);
  }

  /** Throws with the answer's text unless the status is one of `ok`. */
  async expect(method: string, path: string, body?: unknown, ok: readonly number[] = [200, 204], token = this.token): Promise<RawResponse> {
    const res = await this.request(method, path, body, token);
    if (!ok.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 500)}`);
    return res;
  }
}
