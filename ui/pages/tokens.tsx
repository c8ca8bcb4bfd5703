/**
 * Tokens: create one with policies and a TTL; look one up by token or accessor; revoke it. The
 * server accepts a policy name nothing is written under (as Vault does, so a policy can come later),
 * and a token carrying only such a name can do nothing: a name not among the policies is flagged as
 * it is typed, and creating the token with it asks first.
 */
import { useState } from 'preact/hooks';
import { api, list, type Json } from '../api.js';
import { ConfirmButton, Field, Form, Output, Section, Title, formatDuration, formatTime, useAction, useConfirm, useLoad } from '../components.js';

export function Tokens() {
  const [policies, setPolicies] = useState('');
  const [ttl, setTtl] = useState('1h');
  const [displayName, setDisplayName] = useState('');
  const [noDefault, setNoDefault] = useState(false);
  const [orphan, setOrphan] = useState(false);
  const create = useAction<Json>();
  // null: the token may not list policies, so names cannot be checked.
  const known = useLoad<string[] | null>(() => list('sys/policies/acl').catch(() => null), []);
  const confirm = useConfirm('Create token', 'Create it anyway');
  const named = policies.split(',').map((p) => p.trim()).filter(Boolean);
  const missing = known.data ? named.filter((name) => !known.data!.includes(name)) : [];
  const createToken = () =>
    create.run(() =>
      api('POST', orphan ? 'auth/token/create-orphan' : 'auth/token/create', {
        policies: named,
        ...(ttl ? { ttl } : {}),
        ...(displayName ? { display_name: displayName } : {}),
        no_default_policy: noDefault,
      }),
    );

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
          {confirm.dialog}
          <Form
            submit="Create token"
            busy={create.busy}
            error={create.error}
            onSubmit={() => {
              if (missing.length === 0) return createToken();
              confirm.ask(`${missingText(missing)} The token would get nothing from ${missing.length === 1 ? 'it' : 'them'} until ${missing.length === 1 ? 'it is' : 'they are'} written.`, createToken);
              return undefined;
            }}
          >
            <Field
              label="Policies"
              hint={known.data ? `comma-separated; existing: ${known.data.join(', ')}` : known.data === null ? 'comma-separated (your token may not list the policies, so names are not checked)' : 'comma-separated'}
            >
              <input value={policies} onInput={(e) => setPolicies(e.currentTarget.value)} />
            </Field>
            {missing.length > 0 && (
              <p class="warning" role="status">
                {missingText(missing)}
              </p>
            )}
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
                  Policies: {(created.policies as string[]).join(', ')}; TTL {created.lease_duration ? formatDuration(created.lease_duration) : 'none (never expires)'}
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
                <dd>{found.ttl ? formatDuration(found.ttl) : 'none (never expires)'}</dd>
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

function missingText(missing: readonly string[]): string {
  const names = missing.map((name) => `"${name}"`).join(', ');
  return missing.length === 1 ? `No policy named ${names} exists.` : `No policies named ${names} exist.`;
}
