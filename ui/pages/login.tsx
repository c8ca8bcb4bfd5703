/**
 * Sign in with a token, a username and password (userpass), or an OIDC provider (jwt/oidc), as
 * Vault's UI does. The methods offered are the auth mounts tuned with `listing_visibility="unauth"`
 * (sys/internal/ui/mounts answers them without a token); "Other" reaches a method by its mount path.
 * Whatever the method, the token it yields is kept for this tab only (sessionStorage), as a token
 * typed in is; a password stays in the form's state and goes only into a POST body.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { Errors, Field, Form, Title, useAction, useLoad } from '../components.js';

/** The method types this page can sign in with beside a token. */
const TYPES = { userpass: 'Username and password', oidc: 'OIDC', jwt: 'OIDC' } as const;
type MethodType = keyof typeof TYPES | 'token';

interface Method {
  readonly type: MethodType;
  /** The mount path, without its trailing slash ('' for the token). */
  readonly path: string;
  readonly label: string;
}

const TOKEN: Method = { type: 'token', path: '', label: 'Token' };
const OTHER = 'other';

/** The listed auth mounts this page can use, in the order the server lists them. */
async function listedMethods(): Promise<Method[]> {
  const body = await api('GET', 'sys/internal/ui/mounts');
  const auth: Record<string, { type: string; description: string }> = body?.data?.auth ?? {};
  return Object.entries(auth).flatMap(([mount, info]) => {
    if (!(info.type in TYPES)) return [];
    const path = mount.replace(/\/+$/, '');
    return [{ type: info.type as keyof typeof TYPES, path, label: info.description || `${TYPES[info.type as keyof typeof TYPES]} (${path})` }];
  });
}

/** Where the provider sends the browser back: the UI's callback route for the mount, as Vault's UI names it. */
export function oidcRedirectUri(mount: string): string {
  return `${location.origin}/ui/vault/auth/${seg(mount)}/oidc/callback`;
}

export function LoginPage({ onLogin }: { onLogin: (token: string) => Promise<void> }) {
  const listed = useLoad(listedMethods, []);
  const methods = [TOKEN, ...(listed.data ?? [])];
  const [choice, setChoice] = useState('0');
  const [otherType, setOtherType] = useState<keyof typeof TYPES>('userpass');
  const [otherPath, setOtherPath] = useState('');
  const method: Method = choice === OTHER ? { type: otherType, path: otherPath.trim().replace(/^\/+|\/+$/g, '') || otherType, label: '' } : (methods[Number(choice)] ?? TOKEN);
  return (
    <>
      <Title>Sign in</Title>
      <div class="form sign-in-method">
        <Field label="Method" hint={method.type === 'token' ? undefined : `mount path: ${method.path}`}>
          <select value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
            {methods.map((candidate, index) => (
              <option value={String(index)}>{candidate.label}</option>
            ))}
            <option value={OTHER}>Other (by mount path)</option>
          </select>
        </Field>
        {choice === OTHER && (
          <>
            <Field label="Type">
              <select value={otherType} onChange={(e) => setOtherType(e.currentTarget.value as keyof typeof TYPES)}>
                <option value="userpass">userpass</option>
                <option value="oidc">oidc</option>
                <option value="jwt">jwt</option>
              </select>
            </Field>
            <Field label="Mount path" hint="where the method is enabled; empty: its type">
              <input autocomplete="off" placeholder={otherType} value={otherPath} onInput={(e) => setOtherPath(e.currentTarget.value)} />
            </Field>
          </>
        )}
        <Errors error={listed.error} />
      </div>
      {method.type === 'token' && <TokenForm onLogin={onLogin} />}
      {method.type === 'userpass' && <UserpassForm key={method.path} mount={method.path} onLogin={onLogin} />}
      {(method.type === 'oidc' || method.type === 'jwt') && <OidcForm key={method.path} mount={method.path} />}
    </>
  );
}

function TokenForm({ onLogin }: { onLogin: (token: string) => Promise<void> }) {
  const [token, setTokenValue] = useState('');
  const action = useAction<void>();
  return (
    <Form submit="Sign in" busy={action.busy} error={action.error} onSubmit={() => action.run(() => onLogin(token.trim()))}>
      <Field label="Token" hint="kept in this browser tab only, until you sign out or close it">
        <input type="password" autocomplete="off" required value={token} onInput={(e) => setTokenValue(e.currentTarget.value)} />
      </Field>
    </Form>
  );
}

function UserpassForm({ mount, onLogin }: { mount: string; onLogin: (token: string) => Promise<void> }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction<void>();
  const signIn = async () => {
    const body = await api('POST', `auth/${seg(mount)}/login/${encodeURIComponent(username.trim())}`, { password });
    setPassword('');
    await onLogin(body.auth.client_token as string);
  };
  return (
    <Form submit="Sign in" busy={action.busy} error={action.error} onSubmit={() => action.run(signIn)}>
      <Field label="Username">
        <input autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
      </Field>
      <Field label="Password">
        <input type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
      </Field>
    </Form>
  );
}

/**
 * Starts the authorization-code flow: the server makes the provider's URL (state, nonce, PKCE
 * challenge; no client_nonce, so the callback needs none, as in Vault's UI) and this tab goes
 * there; the provider sends it back to the callback route, which OidcCallback completes.
 */
function OidcForm({ mount }: { mount: string }) {
  const [role, setRole] = useState('');
  const action = useAction<void>();
  const start = async () => {
    const redirectUri = oidcRedirectUri(mount);
    const body = await api('POST', `auth/${seg(mount)}/oidc/auth_url`, { role: role.trim(), redirect_uri: redirectUri });
    const url = body?.data?.auth_url as string | undefined;
    if (!url) throw new Error(`the role does not allow the redirect URI ${redirectUri}: add it to its allowed_redirect_uris`);
    location.assign(url);
  };
  return (
    <Form submit="Sign in with OIDC" busy={action.busy} error={action.error} onSubmit={() => action.run(start)}>
      <Field label="Role" hint="empty: the mount's default_role">
        <input autocomplete="off" value={role} onInput={(e) => setRole(e.currentTarget.value)} />
      </Field>
    </Form>
  );
}

/** The mount of an OIDC callback route (`/ui/vault/auth/<mount>/oidc/callback`), or undefined for any other page. */
export function oidcCallbackMount(pathname: string): string | undefined {
  const match = /^\/ui\/vault\/auth\/(.+)\/oidc\/callback$/.exec(pathname);
  if (!match) return undefined;
  try {
    return match[1]!.split('/').map(decodeURIComponent).join('/');
  } catch {
    // A malformed escape names no mount: the page is the sign-in page, as any other unknown page is.
    return undefined;
  }
}

/**
 * Completes an OIDC sign-in on the callback route: the provider's `state` and `code` (or its
 * `error`) go to the mount's oidc/callback, and the token it answers signs this tab in. The URL is
 * put back to `/ui/` at once, so the code is in no history entry the user could reload or share.
 */
export function OidcCallback({ mount, onLogin }: { mount: string; onLogin: (token: string) => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const query = new URLSearchParams(location.search);
    history.replaceState(null, '', '/ui/');
    const forward = new URLSearchParams();
    for (const name of ['state', 'code', 'error', 'error_description']) {
      const value = query.get(name);
      if (value !== null) forward.set(name, value);
    }
    api('GET', `auth/${seg(mount)}/oidc/callback?${forward.toString()}`)
      .then((body) => onLogin(body.auth.client_token as string))
      .catch(setError);
  }, []);
  return (
    <>
      <Title>Sign in</Title>
      {error ? (
        <>
          <Errors error={error} />
          <p>
            <a href="/ui/">Back to sign in</a>
          </p>
        </>
      ) : (
        <p>Signing in…</p>
      )}
    </>
  );
}
