/**
 * The operator UI: set-up screens (init, unseal, login) until the server is unsealed and the
 * browser holds a token, then a navigation of the sections that token may use. Pages are chosen by
 * the URL's fragment (`#/transit/keys`), which never carries the token; what follows a page's route
 * is the page's own (`#/kv/secret/app/db` opens that secret).
 */
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, getToken, setToken, type Json } from './api.js';
import { InitPage } from './pages/init.js';
import { UnsealPage } from './pages/unseal.js';
import { LoginPage, OidcCallback, oidcCallbackMount } from './pages/login.js';
import { Dashboard } from './pages/dashboard.js';
import { SecretsEngines } from './pages/secrets-engines.js';
import { TransitKeys } from './pages/transit-keys.js';
import { TransitTools } from './pages/transit-tools.js';
import { Policies } from './pages/policies.js';
import { Tokens } from './pages/tokens.js';
import { AuditDevices } from './pages/audit-devices.js';
import { CloudAuth } from './pages/cloud-auth.js';
import { KvBrowser } from './pages/kv.js';
import { Entities, Groups } from './pages/identity.js';
import { Leases } from './pages/leases.js';

/** What the signed-in token may do, asked of sys/capabilities-self once at login. */
export interface Session {
  readonly token: string;
  readonly displayName: string;
  readonly policies: readonly string[];
  readonly can: (path: string, capability: string) => boolean;
}

interface NavItem {
  readonly route: string;
  readonly label: string;
  /** The path and capability that decide whether the item is shown; none: always shown. */
  readonly needs?: readonly [string, string];
  /** `rest`: the URL after the route and its slash (a kv mount and path), '' for none. */
  readonly page: (props: { session: Session; rest: string }) => preact.JSX.Element;
}

const NAV: readonly NavItem[] = [
  { route: 'dashboard', label: 'Dashboard', page: Dashboard },
  { route: 'secrets', label: 'Secrets engines', needs: ['sys/mounts', 'read'], page: SecretsEngines },
  { route: 'transit/keys', label: 'Transit keys', page: TransitKeys },
  { route: 'transit/tools', label: 'Transit tools', page: TransitTools },
  { route: 'kv', label: 'KV secrets', needs: ['sys/mounts', 'read'], page: KvBrowser },
  { route: 'cloud', label: 'Cloud auth', needs: ['sys/auth', 'read'], page: CloudAuth },
  { route: 'policies', label: 'Policies', needs: ['sys/policies/acl', 'list'], page: Policies },
  { route: 'tokens', label: 'Tokens', needs: ['auth/token/create', 'update'], page: Tokens },
  { route: 'identity/entities', label: 'Entities', needs: ['identity/entity/id', 'list'], page: Entities },
  { route: 'identity/groups', label: 'Groups', needs: ['identity/group/id', 'list'], page: Groups },
  { route: 'leases', label: 'Leases', needs: ['sys/leases/lookup', 'update'], page: Leases },
  { route: 'audit', label: 'Audit devices', needs: ['sys/audit', 'read'], page: AuditDevices },
];

/** Paths the pages ask about beyond the navigation's (the dashboard's request-rate chart reads sys/metrics). */
const PAGE_PATHS = ['sys/metrics'];

function currentRoute(): string {
  return location.hash.replace(/^#\/?/, '') || 'dashboard';
}

async function openSession(token: string): Promise<Session> {
  setToken(token);
  const self = await api('GET', 'auth/token/lookup-self');
  const paths = [...new Set([...NAV.flatMap((item) => (item.needs ? [item.needs[0]] : [])), ...PAGE_PATHS])];
  const caps: Json = await api('POST', 'sys/capabilities-self', { paths });
  const can = (path: string, capability: string) => {
    const granted: string[] = caps?.data?.[path] ?? caps?.[path] ?? [];
    return granted.includes('root') || granted.includes(capability);
  };
  return { token, displayName: self.data.display_name, policies: self.data.policies ?? [], can };
}

function App() {
  const [status, setStatus] = useState<Json>(null);
  const [statusError, setStatusError] = useState<string | null>(null);
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(true);
  const [route, setRoute] = useState(currentRoute());
  // An OIDC provider sends the browser back to /ui/vault/auth/<mount>/oidc/callback; read once, as the page puts its URL back to /ui/.
  const [callbackMount, setCallbackMount] = useState(() => oidcCallbackMount(location.pathname));

  const refreshStatus = async () => {
    try {
      setStatus(await api('GET', 'sys/seal-status'));
      setStatusError(null);
    } catch (err) {
      setStatusError(err instanceof Error ? err.message : String(err));
    }
  };

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    void refreshStatus();
    return () => removeEventListener('hashchange', onHash);
  }, []);

  // A token kept from earlier in this tab is checked again; one the server refuses is dropped.
  useEffect(() => {
    if (!status || status.sealed || session) return;
    const token = getToken();
    if (!token) {
      setRestoring(false);
      return;
    }
    openSession(token).then(setSession, () => setToken(null)).finally(() => setRestoring(false));
  }, [status]);

  const visible = session ? NAV.filter((item) => !item.needs || session.can(item.needs[0], item.needs[1])) : [];
  const item = visible.find((candidate) => route === candidate.route || route.startsWith(`${candidate.route}/`)) ?? visible[0];

  // A new page focuses its heading; moving within a page (a kv folder) leaves focus where it is.
  useEffect(() => {
    const main = document.querySelector('main h1') as HTMLElement | null;
    main?.focus();
    // On a narrow screen the navigation is one row that scrolls sideways: the current section is brought into it.
    document.querySelector('nav [aria-current="page"]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [item?.route, session]);

  if (statusError) return <Shell><p class="error" role="alert">{statusError}</p></Shell>;
  if (!status) return <Shell><p>Loading…</p></Shell>;
  if (!status.initialized) return <Shell><InitPage onDone={refreshStatus} /></Shell>;
  if (status.sealed) return <Shell><UnsealPage status={status} onStatus={setStatus} /></Shell>;
  if (!session) {
    const onLogin = async (token: string) => {
      try {
        setSession(await openSession(token));
      } catch (err) {
        setToken(null);
        throw err;
      }
    };
    if (callbackMount !== undefined) {
      return (
        <Shell>
          <OidcCallback
            mount={callbackMount}
            onLogin={async (token) => {
              await onLogin(token);
              setCallbackMount(undefined);
            }}
          />
        </Shell>
      );
    }
    if (restoring && getToken()) return <Shell><p>Loading…</p></Shell>;
    return (
      <Shell>
        <LoginPage onLogin={onLogin} />
      </Shell>
    );
  }

  const Page = item!.page;
  const rest = route.startsWith(`${item!.route}/`) ? route.slice(item!.route.length + 1) : '';
  const signOut = () => {
    setToken(null);
    setSession(null);
    location.hash = '';
  };
  return (
    <div class="layout">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); (document.querySelector('main h1') as HTMLElement | null)?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Keywarden</span>
        <span class="who">
          {session.displayName} <span class="muted">({session.policies.join(', ')})</span>
        </span>
        <button type="button" onClick={signOut}>Sign out</button>
      </header>
      <nav aria-label="Sections">
        <ul>
          {visible.map((candidate) => (
            <li>
              <a href={`#/${candidate.route}`} aria-current={candidate === item ? 'page' : undefined}>
                {candidate.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">
        <Page session={session} rest={rest} />
      </main>
    </div>
  );
}

function Shell({ children }: { children: preact.ComponentChildren }) {
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">Keywarden</span>
      </header>
      <main id="main" class="narrow">
        {children}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
