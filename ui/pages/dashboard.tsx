/**
 * The server at a glance: seal and HA state, version, the live request rate, the secrets engines
 * (with how many keys each transit mount holds) and the auth methods.
 */
import { api, list, seg, type Json } from '../api.js';
import { Errors, Section, Title, useLoad } from '../components.js';
import type { Session } from '../main.js';
import { RequestRate } from '../request-rate.js';

export function Dashboard({ session }: { session: Session }) {
  const status = useLoad<Json>(() => api('GET', 'sys/seal-status'), []);
  const leader = useLoad<Json>(() => api('GET', 'sys/leader'), []);
  const mounts = useLoad<{ table: Record<string, Json>; keyCounts: Record<string, number | string> }>(async () => {
    const body = await api('GET', 'sys/mounts');
    const table = (body?.data ?? body) as Record<string, Json>;
    const keyCounts: Record<string, number | string> = {};
    await Promise.all(
      Object.entries(table)
        .filter(([, entry]) => entry.type === 'transit')
        .map(async ([path]) => {
          keyCounts[path] = await list(`${seg(path)}/keys`).then(
            (keys) => keys.length,
            () => 'not permitted',
          );
        }),
    );
    return { table, keyCounts };
  }, []);
  const auths = useLoad<Record<string, Json>>(async () => {
    if (!session.can('sys/auth', 'read')) return {};
    const body = await api('GET', 'sys/auth');
    return (body?.data ?? body) as Record<string, Json>;
  }, []);
  const s = status.data;
  const l = leader.data;
  return (
    <>
      <Title>Dashboard</Title>
      <div class="grid">
        <Section title="Seal">
          <Errors error={status.error} />
          {s && (
            <dl>
              <dt>State</dt>
              <dd>
                <span class={s.sealed ? 'badge bad' : 'badge good'}>{s.sealed ? 'sealed' : 'unsealed'}</span>
              </dd>
              <dt>Shares / threshold</dt>
              <dd>
                {s.n} / {s.t}
              </dd>
              <dt>Version</dt>
              <dd>{s.version}</dd>
              <dt>Cluster</dt>
              <dd>{s.cluster_name ?? '—'}</dd>
              <dt>Storage</dt>
              <dd>{s.storage_type ?? '—'}</dd>
            </dl>
          )}
        </Section>
        <Section title="High availability">
          <Errors error={leader.error} />
          {l && (
            <dl>
              <dt>HA</dt>
              <dd>{l.ha_enabled ? 'enabled' : 'not enabled (one node)'}</dd>
              {l.ha_enabled && (
                <>
                  <dt>This node</dt>
                  <dd>{l.is_self ? 'active' : 'standby'}</dd>
                  <dt>Active node</dt>
                  <dd>{l.leader_address || '—'}</dd>
                </>
              )}
            </dl>
          )}
        </Section>
      </div>
      <Section title="Request rate">
        {session.can('sys/metrics', 'read') ? <RequestRate /> : <p class="muted">Your token may not read sys/metrics, so the request rate is not shown.</p>}
      </Section>
      <Section title="Secrets engines">
        {session.can('sys/mounts', 'read') ? (
          <>
            <Errors error={mounts.error} />
            {mounts.data && (
              <table class="stack-narrow">
                <thead>
                  <tr>
                    <th scope="col">Path</th>
                    <th scope="col">Type</th>
                    <th scope="col">Keys</th>
                    <th scope="col">Description</th>
                  </tr>
                </thead>
                <tbody>
                  {Object.entries(mounts.data.table).map(([path, entry]) => (
                    <tr>
                      <td data-label="Path">
                        <code>{path}</code>
                      </td>
                      <td data-label="Type">{entry.type}</td>
                      <td data-label="Keys">{mounts.data!.keyCounts[path] ?? '—'}</td>
                      <td data-label="Description">{entry.description || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        ) : (
          <p class="muted">Your token may not list the secrets engines.</p>
        )}
      </Section>
      <Section title="Auth methods">
        {session.can('sys/auth', 'read') ? (
          <>
            <Errors error={auths.error} />
            {auths.data && (
              <table class="stack-narrow">
                <thead>
                  <tr>
                    <th scope="col">Path</th>
                    <th scope="col">Type</th>
                    <th scope="col">Accessor</th>
                    <th scope="col">Description</th>
                  </tr>
                </thead>
                <tbody>
                  {Object.entries(auths.data).map(([path, entry]) => (
                    <tr>
                      <td data-label="Path">
                        <code>{path}</code>
                      </td>
                      <td data-label="Type">{entry.type}</td>
                      <td data-label="Accessor">
                        <code>{entry.accessor ?? '—'}</code>
                      </td>
                      <td data-label="Description">{entry.description || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        ) : (
          <p class="muted">Your token may not list the auth methods.</p>
        )}
      </Section>
    </>
  );
}
