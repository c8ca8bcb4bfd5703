/**
 * The UI's only way to the server: `/v1/` on its own origin, with the token in the X-Vault-Token
 * header. The token is kept in sessionStorage (this tab only, gone when it closes), never in a URL
 * or a cookie, so no link, history entry or Referer can carry it.
 */

const TOKEN_KEY = 'keywarden.token';

/** A refused request, with the server's own messages (`errors`) to show as they are. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: readonly string[],
  ) {
    super(messages.join('; '));
  }
}

export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** Response shapes vary by path; each page reads the fields it shows. */
export type Json = any;

/** Sends one request; resolves to the parsed body (undefined for 204), or rejects with ApiError. */
export async function api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<Json> {
  const headers: Record<string, string> = {};
  const token = getToken();
  if (token) headers['X-Vault-Token'] = token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/v1/${path}`, {
      method,
      headers,
      credentials: 'omit',
      cache: 'no-store',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, ['the server cannot be reached']);
  }
  if (response.status === 204) return undefined;
  const text = await response.text();
  let parsed: Json;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const errors = Array.isArray(parsed?.errors) ? (parsed.errors as string[]) : [];
    throw new ApiError(response.status, errors.length > 0 ? errors : [`${response.status} ${response.statusText || 'error'}`]);
  }
  return parsed;
}

/** A LIST, as `GET ?list=true`; a 404 (nothing there yet) is an empty list. */
export async function list(path: string): Promise<string[]> {
  try {
    const body = await api('GET', `${path}?list=true`);
    return (body?.data?.keys as string[] | undefined) ?? [];
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
}

/** Path segments a user typed (mount paths, key names) go into URLs encoded, each on its own. */
export function seg(value: string): string {
  return value
    .split('/')
    .filter((part) => part !== '')
    .map(encodeURIComponent)
    .join('/');
}

export function toBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Decodes base64 as UTF-8 text; undefined when it is not valid UTF-8 (binary data is shown as base64). */
export function fromBase64(encoded: string): string | undefined {
  try {
    const binary = atob(encoded);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
