/**
 * KV secrets: pick a kv mount (version 1 or 2, from its options), browse its folders, read a
 * secret, and write it. On version 2 also: every version's state, reading an older version, soft
 * delete, undelete and destroy of a version, the key's settings and custom metadata, and deleting
 * the key whole. Every destructive action asks first.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, list, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Output, Section, Title, formatTime, useAction, useLoad } from '../components.js';

interface KvMount {
  /** Without the trailing slash. */
  readonly path: string;
  readonly version: 1 | 2;
}

export function KvBrowser() {
  const mounts = useLoad<KvMount[]>(async () => {
    const body = await api('GET', 'sys/mounts');
    const table = (body?.data ?? body) as Record<string, Json>;
    return Object.entries(table)
      .filter(([, entry]) => entry?.type === 'kv')
      .map(([path, entry]) => ({ path: path.replace(/\/$/, ''), version: String(entry.options?.version ?? '1') === '2' ? 2 : 1 }));
  }, []);
  const [chosen, setChosen] = useState<string | null>(null);
  const mount = mounts.data?.find((m) => m.path === chosen) ?? mounts.data?.[0];
  return (
    <>
      <Title>KV secrets</Title>
      <Errors error={mounts.error} />
      {mounts.data && mounts.data.length === 0 && <p class="muted">No kv secrets engine is mounted. Enable one of type kv under Secrets engines.</p>}
      {mount && (
        <>
          <div class="toolbar">
            <Field label="Mount">
              <select value={mount.path} onChange={(e) => setChosen(e.currentTarget.value)}>
                {mounts.data!.map((m) => (
                  <option value={m.path}>
                    {m.path}/ (kv v{m.version})
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <MountBrowser key={mount.path} mount={mount} />
        </>
      )}
    </>
  );
}

function MountBrowser({ mount }: { mount: KvMount }) {
  const [folder, setFolder] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const listing = useLoad<string[]>(
    () => list(mount.version === 2 ? `${seg(mount.path)}/metadata/${seg(folder)}` : `${seg(mount.path)}/${seg(folder)}`),
    [folder],
  );
  const up = () => setFolder(folder.replace(/[^/]+\/$/, ''));
  return (
    <>
      <Section title={`Browse ${mount.path}/${folder}`}>
        <Errors error={listing.error} />
        {folder !== '' && (
          <button type="button" class="link" onClick={up}>
            ↑ Up to {mount.path}/{folder.replace(/[^/]+\/$/, '')}
          </button>
        )}
        {listing.data && listing.data.length === 0 && <p class="muted">Nothing here yet.</p>}
        {listing.data && listing.data.length > 0 && (
          <ul class="key-list" aria-label="Secrets and folders">
            {listing.data.map((name) => (
              <li>
                {name.endsWith('/') ? (
                  <button type="button" class="link" onClick={() => { setFolder(folder + name); setSecret(null); }}>
                    {name}
                  </button>
                ) : (
                  <button type="button" class="link" aria-pressed={secret === folder + name} onClick={() => setSecret(folder + name)}>
                    {name}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <NewSecret mount={mount} folder={folder} onWritten={(path) => { listing.reload(); setSecret(path); }} />
      {secret &&
        (mount.version === 2 ? (
          <SecretV2 key={secret} mount={mount} path={secret} onGone={() => { setSecret(null); listing.reload(); }} />
        ) : (
          <SecretV1 key={secret} mount={mount} path={secret} onGone={() => { setSecret(null); listing.reload(); }} />
        ))}
    </>
  );
}

/** The JSON object a user typed, or an error naming the problem (sent to no server). */
function parseObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`data: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('data: expected a JSON object such as {"password": "…"}');
  return value as Record<string, unknown>;
}

function NewSecret({ mount, folder, onWritten }: { mount: KvMount; folder: string; onWritten: (path: string) => void }) {
  const [name, setName] = useState('');
  const [data, setData] = useState('{\n  \n}');
  const write = useAction<void>();
  return (
    <Section title="Write a new secret">
      <Form
        submit="Create secret"
        busy={write.busy}
        error={write.error}
        onSubmit={() =>
          write.run(async () => {
            const body = parseObject(data);
            const path = folder + name.replace(/^\/+/, '');
            if (mount.version === 2) await api('POST', `${seg(mount.path)}/data/${seg(path)}`, { data: body, options: { cas: 0 } });
            else await api('POST', `${seg(mount.path)}/${seg(path)}`, body);
            setName('');
            onWritten(path);
          })
        }
      >
        <Field label="Secret path" hint={`under ${mount.path}/${folder}; a / makes folders`}>
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Data (JSON)">
          <textarea rows={4} value={data} onInput={(e) => setData(e.currentTarget.value)} />
        </Field>
      </Form>
    </Section>
  );
}

function SecretV1({ mount, path, onGone }: { mount: KvMount; path: string; onGone: () => void }) {
  const secret = useLoad<Json>(() => api('GET', `${seg(mount.path)}/${seg(path)}`), [path]);
  const [draft, setDraft] = useState<string | null>(null);
  const write = useAction<void>();
  const remove = useAction<void>();
  const current = secret.data ? JSON.stringify(secret.data.data, null, 2) : '';
  return (
    <Section title={`Secret ${path}`}>
      <Errors error={secret.error} />
      {secret.data && (
        <>
          <Output label="Data" value={current} />
          <Form
            submit="Save"
            label="Replace the data"
            busy={write.busy}
            error={write.error}
            onSubmit={() =>
              write.run(async () => {
                await api('POST', `${seg(mount.path)}/${seg(path)}`, parseObject(draft ?? current));
                setDraft(null);
                secret.reload();
              })
            }
          >
            <Field label="New data (JSON)" hint="replaces the whole secret">
              <textarea rows={5} value={draft ?? current} onInput={(e) => setDraft(e.currentTarget.value)} />
            </Field>
          </Form>
          <div class="actions spaced">
            <ConfirmButton
              label="Delete secret"
              message={`Delete ${path}? A kv version 1 secret cannot be brought back.`}
              onConfirm={() =>
                remove.run(async () => {
                  await api('DELETE', `${seg(mount.path)}/${seg(path)}`);
                  onGone();
                })
              }
            />
          </div>
          <Errors error={remove.error} />
        </>
      )}
    </Section>
  );
}

function SecretV2({ mount, path, onGone }: { mount: KvMount; path: string; onGone: () => void }) {
  const base = seg(mount.path);
  const metadata = useLoad<Json>(async () => (await api('GET', `${base}/metadata/${seg(path)}`)).data, [path]);
  // The mount's own cas_required applies to every key; a token that may not read the config goes by the key's.
  const mountConfig = useLoad<Json>(() => api('GET', `${base}/config`).then((body) => body?.data, () => undefined), [mount.path]);
  const [shown, setShown] = useState<number | null>(null);
  const current: number = metadata.data?.current_version ?? 0;
  const version = shown ?? current;
  const loaded = useLoad<{ version: number; data: Json; gone: boolean } | null>(async () => {
    if (!version) return null;
    try {
      const body = await api('GET', `${base}/data/${seg(path)}?version=${version}`);
      return { version, data: body.data.data, gone: false };
    } catch (err) {
      // A deleted or destroyed version answers 404 (with its metadata); the table shows which.
      if (err instanceof ApiError && err.status === 404) return { version, data: null, gone: true };
      throw err;
    }
  }, [path, version, metadata.data]);
  // Until the chosen version has arrived, the previous one's data is not shown under its number.
  const read = { error: loaded.error, data: loaded.data?.version === version ? loaded.data : undefined };
  const row = useAction<string>();
  const versionAction = (action: 'delete' | 'undelete' | 'destroy', n: number) =>
    row.run(async () => {
      await api(action === 'destroy' ? 'PUT' : 'POST', `${base}/${action}/${seg(path)}`, { versions: [n] });
      metadata.reload();
      return `${action === 'delete' ? 'Deleted' : action === 'undelete' ? 'Undeleted' : 'Destroyed'} version ${n}`;
    });
  const removeAll = useAction<void>();
  const versions = Object.entries((metadata.data?.versions ?? {}) as Record<string, Json>).sort(([a], [b]) => Number(b) - Number(a));
  return (
    <Section title={`Secret ${path}`}>
      <Errors error={metadata.error} />
      {metadata.data && (
        <>
          <h3>Version {version}{version === current ? ' (current)' : ''}</h3>
          <Errors error={read.error} />
          {read.data?.gone && <p class="muted">Version {version} is deleted or destroyed: its data cannot be read.</p>}
          {read.data && !read.data.gone && <Output label={`Data of version ${version}`} value={JSON.stringify(read.data.data, null, 2)} />}
          <h3>Versions</h3>
          <Errors error={row.error} />
          {row.result && (
            <p class="ok" role="status">
              {row.result}
            </p>
          )}
          <table aria-label="Versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {versions.map(([key, state]) => {
                const n = Number(key);
                const deleted = Boolean(state.deletion_time) && !state.destroyed;
                return (
                  <tr>
                    <td>
                      <button type="button" class="link" aria-pressed={n === version} aria-label={`Read version ${n}`} onClick={() => setShown(n)}>
                        {n}
                      </button>
                    </td>
                    <td>{formatTime(state.created_time)}</td>
                    <td>{state.destroyed ? 'destroyed' : deleted ? `deleted ${formatTime(state.deletion_time)}` : 'live'}</td>
                    <td class="row-actions">
                      {!state.destroyed && !deleted && (
                        <ConfirmButton
                          label={`Delete version ${n}`}
                          message={`Delete version ${n} of ${path}? Its data stays stored and Undelete brings it back.`}
                          onConfirm={() => versionAction('delete', n)}
                        />
                      )}
                      {deleted && (
                        <button type="button" onClick={() => versionAction('undelete', n)}>
                          Undelete version {n}
                        </button>
                      )}
                      {!state.destroyed && (
                        <ConfirmButton
                          label={`Destroy version ${n}`}
                          message={`Destroy version ${n} of ${path}? Its data is removed for good and cannot be brought back.`}
                          onConfirm={() => versionAction('destroy', n)}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <NewVersion
            mount={mount}
            path={path}
            current={current}
            casRequired={Boolean(metadata.data.cas_required || mountConfig.data?.cas_required)}
            initial={read.data && !read.data.gone && version === current ? JSON.stringify(read.data.data, null, 2) : '{\n  \n}'}
            onWritten={() => { setShown(null); metadata.reload(); }}
          />
          <MetadataForm mount={mount} path={path} metadata={metadata.data} onSaved={metadata.reload} />
          <div class="actions spaced">
            <ConfirmButton
              label="Delete secret and all versions"
              message={`Delete ${path} with every version and its metadata? Nothing of it can be brought back.`}
              onConfirm={() =>
                removeAll.run(async () => {
                  await api('DELETE', `${base}/metadata/${seg(path)}`);
                  onGone();
                })
              }
            />
          </div>
          <Errors error={removeAll.error} />
        </>
      )}
    </Section>
  );
}

function NewVersion(props: { mount: KvMount; path: string; current: number; casRequired: boolean; initial: string; onWritten: () => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const [useCas, setUseCas] = useState<boolean | null>(null);
  const cas = useCas ?? props.casRequired;
  const write = useAction<void>();
  return (
    <>
      <h3>Write a new version</h3>
      <Form
        submit="Save new version"
        busy={write.busy}
        error={write.error}
        onSubmit={() =>
          write.run(async () => {
            const data = parseObject(draft ?? props.initial);
            await api('POST', `${seg(props.mount.path)}/data/${seg(props.path)}`, { data, ...(cas ? { options: { cas: props.current } } : {}) });
            setDraft(null);
            props.onWritten();
          })
        }
      >
        <Field label="Data of the new version (JSON)">
          <textarea rows={5} value={draft ?? props.initial} onInput={(e) => setDraft(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={cas} onChange={(e) => setUseCas(e.currentTarget.checked)} />
          Check-and-set: only if version {props.current} is still the current one{props.casRequired ? ' (required here)' : ''}
        </label>
      </Form>
    </>
  );
}

function MetadataForm({ mount, path, metadata, onSaved }: { mount: KvMount; path: string; metadata: Json; onSaved: () => void }) {
  const customText = Object.entries((metadata.custom_metadata ?? {}) as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  const [maxVersions, setMaxVersions] = useState(String(metadata.max_versions ?? 0));
  const [casRequired, setCasRequired] = useState(Boolean(metadata.cas_required));
  const [deleteAfter, setDeleteAfter] = useState(String(metadata.delete_version_after ?? '0s'));
  const [custom, setCustom] = useState(customText);
  const save = useAction<string>();
  return (
    <details class="config">
      <summary>Metadata and settings</summary>
      <dl>
        <dt>Created</dt>
        <dd>{formatTime(metadata.created_time)}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(metadata.updated_time)}</dd>
        <dt>Current / oldest version</dt>
        <dd>
          {metadata.current_version} / {metadata.oldest_version}
        </dd>
      </dl>
      <Form
        submit="Save metadata"
        busy={save.busy}
        error={save.error}
        onSubmit={() =>
          save.run(async () => {
            const customMetadata: Record<string, string> = {};
            for (const line of custom.split(/\r?\n/)) {
              if (line.trim() === '') continue;
              const at = line.indexOf('=');
              if (at <= 0) throw new Error(`custom_metadata: "${line}" is not key=value`);
              customMetadata[line.slice(0, at).trim()] = line.slice(at + 1).trim();
            }
            await api('POST', `${seg(mount.path)}/metadata/${seg(path)}`, {
              max_versions: Number(maxVersions),
              cas_required: casRequired,
              delete_version_after: deleteAfter,
              custom_metadata: customMetadata,
            });
            onSaved();
            return 'Saved metadata';
          })
        }
      >
        <Field label="Max versions" hint="0: the mount's setting">
          <input inputMode="numeric" value={maxVersions} onInput={(e) => setMaxVersions(e.currentTarget.value)} />
        </Field>
        <Field label="Delete versions after" hint="a duration such as 720h; 0s: never">
          <input value={deleteAfter} onInput={(e) => setDeleteAfter(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={casRequired} onChange={(e) => setCasRequired(e.currentTarget.checked)} />
          Require check-and-set on writes
        </label>
        <Field label="Custom metadata" hint="one key=value a line">
          <textarea rows={3} value={custom} onInput={(e) => setCustom(e.currentTarget.value)} />
        </Field>
      </Form>
      {save.result && (
        <p class="ok" role="status">
          {save.result}
        </p>
      )}
    </details>
  );
}
