/**
 * The CLI's HTTP client: address and token from flags, KEYWARDEN_* or VAULT_* variables, or the
 * token helper file; errors typed so the CLI can pick its exit code.
 */
import { readFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writePrivateFile } from '../private-files.js';

/** The server answered with an error status. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
    readonly path: string,
  ) {
    super(errors.length > 0 ? errors.join('; ') : `HTTP ${status}`);
  }
}

/** The server could not be reached. */
export class ConnectionError extends Error {}

/** Wrong use of the command line. */
export class UsageError extends Error {}

export interface CliEnvironment {
  readonly env: NodeJS.ProcessEnv;
}

export function serverAddress(env: NodeJS.ProcessEnv): string {
  return (env.KEYWARDEN_ADDR ?? env.VAULT_ADDR ?? 'http://127.0.0.1:8200').replace(/\/+$/, '');
}

/** Where `login` keeps the token (0600), like Vault's ~/.vault-token but our own. */
export function tokenFile(env: NodeJS.ProcessEnv): string {
  return env.KEYWARDEN_TOKEN_FILE ?? path.join(env.HOME ?? os.homedir(), '.keywarden-token');
}

export async function storedToken(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (env.KEYWARDEN_TOKEN) return env.KEYWARDEN_TOKEN;
  if (env.VAULT_TOKEN) return env.VAULT_TOKEN;
  try {
    const text = (await readFile(tokenFile(env), 'utf8')).trim();
    return text || undefined;
  } catch {
    return undefined;
  }
}

export async function saveToken(env: NodeJS.ProcessEnv, token: string): Promise<string> {
  const file = tokenFile(env);
  // A directory it creates is private; an existing one (usually $HOME) is the user's to decide.
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writePrivateFile(file, token);
  return file;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export class ApiClient {
  constructor(
    readonly address: string,
    public token: string | undefined,
  ) {}

  async request(method: string, apiPath: string, body?: unknown, query?: Record<string, string>): Promise<ApiResponse> {
    const url = new URL(`${this.address}/v1/${apiPath.replace(/^\/+/, '')}`);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          ...(this.token ? { 'X-Vault-Token': this.token } : {}),
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          'X-Vault-Request': 'true',
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new ConnectionError(`cannot reach the server at ${this.address}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.status >= 400) {
      const errors = (parsed as { errors?: unknown } | undefined)?.errors;
      throw new RequestError(res.status, Array.isArray(errors) ? errors.map(String) : text ? [text.slice(0, 500)] : [], apiPath);
    }
    return { status: res.status, body: parsed };
  }

  read(p: string, query?: Record<string, string>) {
    return this.request('GET', p, undefined, query);
  }
  write(p: string, body: unknown = {}) {
    return this.request('PUT', p, body);
  }
  list(p: string) {
    return this.request('GET', p, undefined, { list: 'true' });
  }
  delete(p: string) {
    return this.request('DELETE', p);
  }
}
