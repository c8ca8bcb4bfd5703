/**
 * KV secrets: pick a kv mount (version 1 or 2, from its options), browse its folders, read a
 * secret, and write it. On version 2 also: every version's state, reading an older version, soft
 * delete, undelete and destroy of a version, the key's settings and custom metadata, and deleting
 * the key whole. Every destructive action asks first. Values stay masked until shown. The URL
 * names the mount, folder and secret (`#/kv/secret/app/db`), so a link opens that secret.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, list, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, formatTime, useAction, useLoad } from '../components.js';
import { DataEditor, SecretData, draftOf, readDraft, type Draft } from '../kv-data.js';

interface KvMount {
  /** Without the trailing slash. */
  readonly path: string;
  readonly version: 1 | 2;
}

/** Where a kv route points: `rest` is the URL after `#/kv/`, each segment encoded. */
function locate(rest: string, mounts: readonly KvMount[]): { mount: KvMount | undefined; folder: string; secret: string | null; unknown: string | null } {
  const wanted = rest
    .split('/')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    })
    .join('/');
  // The longest mount path that the route starts with: mounts may nest (team/ and team/kv/).
  const mount = [...mounts].sort((a, b) => b.path.length - a.path.length).find((m) => wanted === m.path || wanted.startsWith(`${m.path}/`));
  if (!mount) return { mount: mounts[0], folder: '', secret: null, unknown: wanted === '' ? null : wanted };
  const within = wanted.slice(mount.path.length + 1);
  if (within === '' || within.endsWith('/')) return { mount, folder: within, secret: null, unknown: null };
  return { mount, folder: within.slice(0, within.lastIndexOf('/') + 1), secret: within, unknown: null };
}

/** The link to a place in the KV browser: a folder (ending in /) or a secret of a mount. */
function kvHref(mount: KvMount, path: string): string {
  return `#/kv/${`${mount.path}/${path}`.split('/').map(encodeURIComponent).join('/')}`;
}

/** Opens a place in the KV browser by changing the URL (so the back button and links work). */
function go(mount: KvMount, path: string): void {
  location.hash = kvHref(mount, path);
}

export function KvBrowser({ rest = '' }: { rest?: string }) {
  const mounts = useLoad<KvMount[]>(async () => {
    const body = await api('GET', 'sys/mounts');
    const table = (body?.data ?? body) as Record<string, Json>;
    return Object.entries(table)
      .filter(([, entry]) => entry?.type === 'kv')
      .map(([path, entry]) => ({ path: path.replace(/\/$/, ''), version: String(entry.options?.version ?? '1') === '2' ? 2 : 1 }));
  }, []);
  const place = mounts.data ? locate(rest, mounts.data) : undefined;
  const mount = place?.mount;
  return (
    <>
      <Title>KV secrets</Title>
      <Errors error={mounts.error} />
      {place?.unknown && (
        <p class="error" role="alert">
          No kv secrets engine is mounted at {place.unknown.split('/')[0]}/.
        </p>
      )}
      {mounts.data && mounts.data.length === 0 && <p class="muted">No kv secrets engine is mounted. Enable one of type kv under Secrets engines.</p>}
      {mount && place && (
        <>
          <div class="toolbar">
            <Field label="Mount">
              <select value={mount.path} onChange={(e) => go(mounts.data!.find((m) => m.path === e.currentTarget.value)!, '')}>
                {mounts.data!.map((m) => (
                  <option value={m.path}>
                    {m.path}/ (kv v{m.version})
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <MountBrowser key={mount.path} mount={mount} folder={place.folder} secret={place.secret} />
        </>
      )}
    </>
  );
}

function MountBrowser({ mount, folder, secret }: { mount: KvMount; folder: string; secret: string | null }) {
  const listing = useLoad<string[]>(
    () => list(mount.version === 2 ? `${seg(mount.path)}/metadata/${seg(folder)}` : `${seg(mount.path)}/${seg(folder)}`),
    [folder],
  );
  const parent = folder.replace(/[^/]+\/$/, '');
  return (
    <div class="split">
      <Section title={`Browse ${mount.path}/${folder}`}>
        <Errors error={listing.error} />
        {folder !== '' && (
          <a class="up" href={kvHref(mount, parent)}>
            ↑ Up to {mount.path}/{parent}
          </a>
        )}
        {listing.data && listing.data.length === 0 && <p class="muted">Nothing here yet.</p>}
        {listing.data && listing.data.length > 0 && (
          <ul class="key-list" aria-label="Secrets and folders">
            {listing.data.map((name) => (
              <li>
                <button type="button" class="link" {...(name.endsWith('/') ? {} : { 'aria-pressed': secret === folder + name })} onClick={() => go(mount, folder + name)}>
                  {name}
                </button>
              </li>
            ))}
          </ul>
        )}
      </Section>
      <div class="stack">
        {secret &&
          (mount.version === 2 ? (
            <SecretV2 key={secret} mount={mount} path={secret} onGone={() => { go(mount, folder); listing.reload(); }} />
          ) : (
            <SecretV1 key={secret} mount={mount} path={secret} onGone={() => { go(mount, folder); listing.reload(); }} />
          ))}
        <NewSecret mount={mount} folder={folder} onWritten={(path) => { listing.reload(); go(mount, path); }} />
      </div>
    </div>
  );
}

function NewSecret({ mount, folder, onWritten }: { mount: KvMount; folder: string; onWritten: (path: string) => void }) {
  const [name, setName] = useState('');
  const [draft, setDraft] = useState<Draft>(() => draftOf({}));
  const write = useAction<void>();
  return (
    <Section title="Write a new secret">
      <Form
        submit="Create secret"
        busy={write.busy}
        error={write.error}
        onSubmit={() =>
          write.run(async () => {
            const body = readDraft(draft);
            const path = folder + name.replace(/^\/+/, '');
            if (mount.version === 2) await api('POST', `${seg(mount.path)}/data/${seg(path)}`, { data: body, options: { cas: 0 } });
            else await api('POST', `${seg(mount.path)}/${seg(path)}`, body);
            setName('');
            // The next secret starts empty, in the mode the user chose.
            setDraft({ ...draftOf({}), mode: draft.mode });
            onWritten(path);
          })
        }
      >
        <Field label="Secret path" hint={`under ${mount.path}/${folder}; a / makes folders`}>
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <DataEditor label="Data" draft={draft} onChange={setDraft} />
      </Form>
    </Section>
  );
}

function SecretV1({ mount, path, onGone }: { mount: KvMount; path: string; onGone: () => void }) {
  const secret = useLoad<Json>(() => api('GET', `${seg(mount.path)}/${seg(path)}`), [path]);
  // Until edited, the form holds the stored data (its values masked).
  const [draft, setDraft] = useState<Draft | null>(null);
  const write = useAction<void>();
  const remove = useAction<void>();
  const current = draft ?? draftOf(secret.data?.data ?? {});
  return (
    <Section title={`Secret ${path}`} reveal>
      <Errors error={secret.error} />
      {secret.data && (
        <>
          <SecretData label="Data" data={secret.data.data} />
          <Form
            submit="Save"
            label="Replace the data"
            busy={write.busy}
            error={write.error}
            onSubmit={() =>
              write.run(async () => {
                await api('POST', `${seg(mount.path)}/${seg(path)}`, readDraft(current));
                setDraft(null);
                secret.reload();
              })
            }
          >
            <DataEditor label="New data" draft={current} onChange={setDraft} />
            <p class="hint">Saving replaces the whole secret.</p>
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
    <Section title={`Secret ${path}`} reveal>
      <Errors error={metadata.error} />
      {metadata.data && (
        <>
          <h3>Version {version}{version === current ? ' (current)' : ''}</h3>
          <Errors error={read.error} />
          {read.data?.gone && <p class="muted">Version {version} is deleted or destroyed: its data cannot be read.</p>}
          {read.data && !read.data.gone && <SecretData key={version} label={`Data of version ${version}`} data={read.data.data} />}
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
            initial={read.data && !read.data.gone && version === current ? read.data.data : {}}
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

/** A new version, starting from the current one's data (values masked), or empty when it cannot be read. */
function NewVersion(props: { mount: KvMount; path: string; current: number; casRequired: boolean; initial: Record<string, unknown>; onWritten: () => void }) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const shown = draft ?? draftOf(props.initial);
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
            const data = readDraft(shown);
            await api('POST', `${seg(props.mount.path)}/data/${seg(props.path)}`, { data, ...(cas ? { options: { cas: props.current } } : {}) });
            setDraft(null);
            props.onWritten();
          })
        }
      >
        <DataEditor label="Data of the new version" draft={shown} onChange={setDraft} />
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
