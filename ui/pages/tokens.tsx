/** Tokens: create one with policies and a TTL; look one up by token or accessor; revoke it. */
import { useState } from 'preact/hooks';
import { api, type Json } from '../api.js';
import { ConfirmButton, Field, Form, Output, Section, Title, formatTime, useAction } from '../components.js';

export function Tokens() {
  const [policies, setPolicies] = useState('');
  const [ttl, setTtl] = useState('1h');
  const [displayName, setDisplayName] = useState('');
  const [noDefault, setNoDefault] = useState(false);
  const [orphan, setOrphan] = useState(false);
  const create = useAction<Json>();

  const [by, setBy] = useState<'token' | 'accessor'>('accessor');
  const [value, setValue] = useState('');
  const lookup = useAction<Json>();
  const revoke = useAction<string>();

  const created = create.result?.auth;
  const found = lookup.result?.data;
  return (
    <>
      <Title>Tokens</Title>
      <div class="grid">
        <Section title="Create a token">
          <Form
            submit="Create token"
            busy={create.busy}
            error={create.error}
            onSubmit={() =>
              create.run(() =>
                api('POST', orphan ? 'auth/token/create-orphan' : 'auth/token/create', {
                  policies: policies.split(',').map((p) => p.trim()).filter(Boolean),
                  ...(ttl ? { ttl } : {}),
                  ...(displayName ? { display_name: displayName } : {}),
                  no_default_policy: noDefault,
                }),
              )
            }
          >
            <Field label="Policies" hint="comma-separated">
              <input value={policies} onInput={(e) => setPolicies(e.currentTarget.value)} />
            </Field>
            <Field label="TTL" hint="e.g. 1h, 30m">
              <input value={ttl} onInput={(e) => setTtl(e.currentTarget.value)} />
            </Field>
            <Field label="Display name">
              <input value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />
            </Field>
            <label class="check">
              <input type="checkbox" checked={noDefault} onChange={(e) => setNoDefault(e.currentTarget.checked)} /> Without the default policy
            </label>
            <label class="check">
              <input type="checkbox" checked={orphan} onChange={(e) => setOrphan(e.currentTarget.checked)} /> Orphan (not revoked with yours)
            </label>
            {created && (
              <>
                <p class="warning">The token is shown once.</p>
                <Output label="Token" value={created.client_token} />
                <Output label="Accessor" value={created.accessor} />
                <p>
                  Policies: {(created.policies as string[]).join(', ')}; TTL {created.lease_duration}s
                </p>
              </>
            )}
          </Form>
        </Section>
        <Section title="Look up or revoke a token">
          <Form
            submit="Look up"
            busy={lookup.busy}
            error={lookup.error ?? revoke.error}
            onSubmit={() =>
              lookup.run(() =>
                by === 'token' ? api('POST', 'auth/token/lookup', { token: value.trim() }) : api('POST', 'auth/token/lookup-accessor', { accessor: value.trim() }),
              )
            }
          >
            <Field label="Find by">
              <select value={by} onChange={(e) => setBy(e.currentTarget.value as 'token' | 'accessor')}>
                <option value="accessor">accessor</option>
                <option value="token">token</option>
              </select>
            </Field>
            <Field label={by === 'token' ? 'Token' : 'Accessor'}>
              {by === 'token' ? (
                <input type="password" autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
              ) : (
                <input autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
              )}
            </Field>
            {found && (
              <dl class="inline">
                <dt>Display name</dt>
                <dd>{found.display_name}</dd>
                <dt>Policies</dt>
                <dd>{(found.policies ?? []).join(', ')}</dd>
                <dt>Accessor</dt>
                <dd>
                  <code>{found.accessor}</code>
                </dd>
                <dt>Expires</dt>
                <dd>{found.expire_time ? formatTime(found.expire_time) : 'never'}</dd>
                <dt>TTL left</dt>
                <dd>{found.ttl}s</dd>
              </dl>
            )}
            {revoke.result && <p class="ok" role="status">{revoke.result}</p>}
          </Form>
          <ConfirmButton
            label="Revoke token"
            message={`Revoke the token with this ${by}? It and the tokens it created stop working at once.`}
            onConfirm={() =>
              revoke.run(async () => {
                if (by === 'token') await api('POST', 'auth/token/revoke', { token: value.trim() });
                else await api('POST', 'auth/token/revoke-accessor', { accessor: value.trim() });
                lookup.reset();
                return 'Revoked';
              })
            }
          />
        </Section>
      </div>
    </>
  );
}
