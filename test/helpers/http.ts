/** A small HTTP client for tests: any method (LIST included), raw or JSON bodies, parsed answers. */
import http from 'node:http';
import { expect } from 'chai';

export interface TestResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** The body's bytes as received (binary answers: snapshots). */
  readonly bytes: Buffer;
  /** Parsed JSON, or undefined for an empty body. */
  readonly body: any;
}

export interface RequestOptions {
  readonly token?: string;
  readonly body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  readonly rawBody?: string | Buffer;
  readonly headers?: Record<string, string>;
  /** The local address to connect from (any 127.x.y.z on Linux), to appear as another client. */
  readonly localAddress?: string;
  /** A keep-alive agent, to send the request on a connection already open (one worker of several); none by default. */
  readonly agent?: http.Agent;
}

export function request(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  // The path is sent byte for byte (no URL normalisation), so tests can send `..` and odd encodings.
  const base = new URL(baseUrl);
  const rawPath = path.startsWith('/') ? path : `/v1/${path}`;
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers['X-Vault-Token'] = options.token;
  if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path: rawPath, method, headers, agent: options.agent ?? false, localAddress: options.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        let body: unknown;
        try {
          body = text === '' ? undefined : JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, bytes, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A client bound to one server and, optionally, one token. */
export class TestClient {
  constructor(
    readonly baseUrl: string,
    public token?: string,
  ) {}

  send(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
    return request(this.baseUrl, method, path, { ...(this.token ? { token: this.token } : {}), ...options });
  }
  get(path: string, options?: RequestOptions) {
    return this.send('GET', path, options);
  }
  list(path: string, options?: RequestOptions) {
    return this.send('LIST', path, options);
  }
  post(path: string, body?: unknown, options?: RequestOptions) {
    return this.send('POST', path, { ...options, ...(body === undefined ? {} : { body }) });
  }
  put(path: string, body?: unknown, options?: RequestOptions) {
    return this.send('PUT', path, { ...options, ...(body === undefined ? {} : { body }) });
  }
  delete(path: string, options?: RequestOptions) {
    return this.send('DELETE', path, options);
  }
}

/** Creates a token through `client` (auth/token/create with `body`) and returns its id; asserts the 200. */
export async function createToken(client: TestClient, body: Record<string, unknown> = {}): Promise<string> {
  const res = await client.post('auth/token/create', body);
  expect(res.status, res.text).to.equal(200);
  return res.body.auth.client_token as string;
}
