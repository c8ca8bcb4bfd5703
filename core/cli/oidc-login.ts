/**
 * `login -method=oidc`, as the vault CLI does it: ask the mount for an authorization URL whose
 * redirect comes back to a listener of the CLI's own on the loopback interface (port 8250 unless
 * `port=` says otherwise), open the browser there (or print the URL with `skip_browser=true`),
 * and when the provider sends the browser back, hand the state and code to `oidc/callback` with
 * the client nonce only this CLI knows. The listener answers the browser and closes.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Io } from './output.js';
import { UsageError, type ApiResponse, type ApiClient } from './client.js';
import { errorMessage } from '../errors.js';

/** How long the CLI waits for the browser to come back, as the vault CLI does. */
export const CALLBACK_WAIT_MS = 2 * 60_000;

const FIELDS = ['role', 'port', 'listenaddress', 'callbackhost', 'callbackmethod', 'callbackport', 'skip_browser'] as const;

function text(fields: Record<string, unknown>, name: string, fallback: string): string {
  const value = fields[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new UsageError(`${name} must be given once`);
  return value;
}

const page = (title: string, detail: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${detail}</p></body></html>`;

const escape = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Runs the flow against `auth/<mount>`; answers the callback's login response. */
export async function oidcLogin(client: ApiClient, mount: string, fields: Record<string, unknown>, io: Io): Promise<ApiResponse> {
  for (const key of Object.keys(fields)) if (!(FIELDS as readonly string[]).includes(key)) throw new UsageError(`unknown login field "${key}" (known: ${FIELDS.join(', ')})`);
  const listenAddress = text(fields, 'listenaddress', 'localhost');
  const port = text(fields, 'port', '8250');
  const callbackHost = text(fields, 'callbackhost', 'localhost');
  const callbackMethod = text(fields, 'callbackmethod', 'http');
  const callbackPort = text(fields, 'callbackport', port);
  const skipBrowser = ['true', '1', 't', 'True', 'TRUE'].includes(text(fields, 'skip_browser', 'false'));
  const role = text(fields, 'role', '');
  const redirectUri = `${callbackMethod}://${callbackHost}:${callbackPort}/oidc/callback`;
  const clientNonce = randomBytes(20).toString('base64url');

  const started = await client.write(`auth/${mount}/oidc/auth_url`, { role, redirect_uri: redirectUri, client_nonce: clientNonce });
  const authUrl = (started.body?.data?.auth_url as string | undefined) ?? '';
  if (authUrl === '') throw new UsageError(`Unable to authorize role "${role}" with redirect_uri "${redirectUri}": check the role's allowed_redirect_uris and the server's log`);

  let settle: (outcome: { response?: ApiResponse; error?: Error }) => void = () => undefined;
  const outcome = new Promise<{ response?: ApiResponse; error?: Error }>((resolve) => (settle = resolve));
  const listener = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://callback');
    if (url.pathname !== '/oidc/callback') {
      res.writeHead(404).end();
      return;
    }
    const query = { state: url.searchParams.get('state') ?? '', code: url.searchParams.get('code') ?? '', client_nonce: clientNonce };
    const error = url.searchParams.get('error');
    client
      .read(`auth/${mount}/oidc/callback`, { ...query, ...(error ? { error } : {}) })
      .then((response) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page('Signed in', 'You can close this window and return to the command line.'));
        settle({ response });
      })
      .catch((err: unknown) => {
        res.writeHead(400, { 'Content-Type': 'text/html; charset=utf-8' }).end(page('Sign-in failed', escape((err as Error).message)));
        settle({ error: err instanceof Error ? err : new Error(errorMessage(err)) });
      });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', (err) => reject(new UsageError(`could not listen on ${listenAddress}:${port} for the callback: ${err.message}`)));
    listener.listen(Number(port), listenAddress, resolve);
  });
  const timer = setTimeout(() => settle({ error: new UsageError('timed out waiting for response from provider') }), CALLBACK_WAIT_MS);
  try {
    if (skipBrowser) {
      io.err(`Complete the login via your OIDC provider. Open the following link in your browser:\n\n    ${authUrl}\n\n\n`);
    } else {
      io.err(`Complete the login via your OIDC provider. Launching browser to:\n\n    ${authUrl}\n\n\n`);
      openBrowser(authUrl, io);
    }
    io.err('Waiting for OIDC authentication to complete...\n');
    const { response, error } = await outcome;
    if (error !== undefined) throw error instanceof Error ? error : new Error(errorMessage(error));
    return response!;
  } finally {
    clearTimeout(timer);
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }
}

/** The desktop's way to open a URL; a failure leaves the printed URL to the user. */
function openBrowser(url: string, io: Io): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(command, [url], { stdio: 'ignore', detached: true });
  child.on('error', (err) => io.err(`Error attempting to automatically open browser: '${err.message}'.\nPlease visit the authorization URL manually.\n`));
  child.unref();
}
