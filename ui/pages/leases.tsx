/**
 * Leases (docs/leases.md): browse the lease tree by prefix, look a lease up, renew or revoke it,
 * and revoke every lease under a prefix after confirming (the answer to a compromised auth mount).
 * sys/leases/renew refuses a token's lease, as Vault's does: for those the page says how a token is
 * renewed instead of offering a button that can only fail.
 * A token's lease id names the path that issued it and the token's salted hash, never the token.
 */
import { useState } from 'preact/hooks';
import { api, list, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, formatDuration, formatTime, useAction, useLoad } from '../components.js';

export function Leases() {
  const [prefix, setPrefix] = useState('');
  const [typed, setTyped] = useState('');
  const keys = useLoad(() => list(`sys/leases/lookup/${seg(prefix)}${prefix ? '/' : ''}`), [prefix]);
  const [selected, setSelected] = useState('');
  const [increment, setIncrement] = useState('');
  const lookup = useAction<Json>();
  const act = useAction<string>();
  const go = (next: string) => {
    setPrefix(next);
    setTyped(next);
  };
  const look = (id: string) => {
    setSelected(id);
    act.reset();
    return lookup.run(async () => (await api('PUT', 'sys/leases/lookup', { lease_id: id })).data);
  };
  const parent = prefix.replace(/[^/]*\/?$/, '');
  const found = lookup.result;
  return (
    <>
      <Title>Leases</Title>
      <div class="split">
        <Section title="Lease tree">
          <Form submit="List" label="List leases under a prefix" onSubmit={() => go(typed.trim().replace(/^\/+/, ''))}>
            <Field label="Prefix" hint="e.g. auth/userpass/ (empty: the top)">
              <input value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
            </Field>
          </Form>
          <Errors error={keys.error} />
          <ul class="key-list" aria-label="Leases and folders">
            {prefix && (
              <li>
                <button type="button" class="link" onClick={() => go(parent)}>
                  ..
                </button>
              </li>
            )}
            {(keys.data ?? []).map((key) => {
              const full = `${prefix}${prefix && !prefix.endsWith('/') ? '/' : ''}${key}`;
              return (
                <li>
                  {key.endsWith('/') ? (
                    <button type="button" class="link" onClick={() => go(full)}>
                      {key}
                    </button>
                  ) : (
                    <button type="button" class="link" aria-pressed={selected === full} aria-label={`Look up ${full}`} onClick={() => look(full)}>
                      {key}
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
          {keys.data?.length === 0 && <p class="muted">No leases under this prefix.</p>}
          {prefix && (
            <ConfirmButton
              label={`Revoke every lease under ${prefix}`}
              message={`Revoke every lease under ${prefix}? Every token issued there stops working at once, with the tokens created from them.`}
              onConfirm={() =>
                act.run(async () => {
                  await api('PUT', `sys/leases/revoke-prefix/${seg(prefix)}`, {});
                  keys.reload();
                  lookup.reset();
                  return `Revoked every lease under ${prefix}`;
                })
              }
            />
          )}
          {!selected && act.result && <p class="ok" role="status">{act.result}</p>}
          {!selected && <Errors error={act.error} />}
        </Section>
        <Section title="Lease">
          <Errors error={lookup.error} />
          {!found && !lookup.error && <p class="muted">Pick a lease from the tree.</p>}
          {found && (
            <>
              <dl class="inline">
                <dt>Lease ID</dt>
                <dd>
                  <code>{found.id}</code>
                </dd>
                <dt>Issued</dt>
                <dd>{formatTime(found.issue_time)}</dd>
                <dt>Last renewed</dt>
                <dd>{found.last_renewal ? formatTime(found.last_renewal) : 'never'}</dd>
                <dt>Expires</dt>
                <dd>{formatTime(found.expire_time)}</dd>
                <dt>TTL left</dt>
                <dd>{formatDuration(found.ttl)}</dd>
                <dt>Renewable</dt>
                <dd>{found.renewable ? 'yes' : 'no'}</dd>
              </dl>
              {found.id.startsWith('auth/') ? (
                <p class="muted" role="note">
                  A token's lease is renewed with the token (auth/token/renew-self) or by its accessor (auth/token/renew-accessor), not here, as in Vault.
                </p>
              ) : (
              <Form
                submit="Renew"
                label="Renew the lease"
                busy={act.busy}
                error={act.error}
                onSubmit={() =>
                  act.run(async () => {
                    await api('PUT', 'sys/leases/renew', { lease_id: found.id, ...(increment.trim() ? { increment: increment.trim() } : {}) });
                    await lookup.run(async () => (await api('PUT', 'sys/leases/lookup', { lease_id: found.id })).data);
                    return `Renewed ${found.id}`;
                  })
                }
              >
                <Field label="Increment" hint="the TTL asked for, e.g. 1h (empty: the lease's own)">
                  <input value={increment} onInput={(e) => setIncrement(e.currentTarget.value)} />
                </Field>
              </Form>
              )}
              <ConfirmButton
                label="Revoke lease"
                message={
                  found.id.startsWith('auth/')
                    ? `Revoke ${found.id}? Its token stops working at once, with the tokens created from it.`
                    : `Revoke ${found.id}? Its engine revokes the secret at once (a certificate is revoked, credentials are deleted).`
                }
                onConfirm={() =>
                  act.run(async () => {
                    await api('PUT', 'sys/leases/revoke', { lease_id: found.id });
                    lookup.reset();
                    setSelected('');
                    keys.reload();
                    return `Revoked ${found.id}`;
                  })
                }
              />
            </>
          )}
          {selected && act.result && <p class="ok" role="status">{act.result}</p>}
        </Section>
      </div>
    </>
  );
}
