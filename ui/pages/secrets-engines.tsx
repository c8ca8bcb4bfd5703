/** Secrets engines: enable one at a path, tune its TTLs and description, reload its backend, disable it. */
import { useState } from 'preact/hooks';
import { api, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, formatDuration, useAction, useLoad } from '../components.js';

export function SecretsEngines() {
  const mounts = useLoad<Record<string, Json>>(async () => {
    const body = await api('GET', 'sys/mounts');
    return (body?.data ?? body) as Record<string, Json>;
  }, []);
  const [path, setPath] = useState('');
  const [type, setType] = useState('transit');
  const [description, setDescription] = useState('');
  const enable = useAction<void>();
  const row = useAction<string>();
  const [tuning, setTuning] = useState<string | null>(null);

  return (
    <>
      <Title>Secrets engines</Title>
      <Section title="Enable an engine">
        <Form
          submit="Enable"
          busy={enable.busy}
          error={enable.error}
          onSubmit={() =>
            enable.run(async () => {
              await api('POST', `sys/mounts/${seg(path || type)}`, { type, description });
              setPath('');
              setDescription('');
              mounts.reload();
            })
          }
        >
          <Field label="Type">
            <input list="engine-types" required value={type} onInput={(e) => setType(e.currentTarget.value)} />
            <datalist id="engine-types">
              <option value="transit" />
              <option value="kv-v2" />
              <option value="kv" />
            </datalist>
          </Field>
          <Field label="Path" hint="defaults to the type">
            <input value={path} placeholder={type} onInput={(e) => setPath(e.currentTarget.value)} />
          </Field>
          <Field label="Description">
            <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </Field>
        </Form>
      </Section>
      <Section title="Mounted engines">
        <Errors error={mounts.error} />
        <Errors error={row.error} />
        {row.result && (
          <p class="ok" role="status">
            {row.result}
          </p>
        )}
        {mounts.data && (
          <table class="stack-narrow">
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Type</th>
                <th scope="col">Default / max TTL</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(mounts.data).map(([mountPath, entry]) => {
                const system = ['sys/', 'identity/', 'cubbyhole/'].includes(mountPath);
                return (
                  <tr>
                    <td data-label="Path">
                      <code>{mountPath}</code>
                    </td>
                    <td data-label="Type">{entry.type}</td>
                    <td data-label="TTL (default/max)">
                      {ttl(entry.config?.default_lease_ttl)} / {ttl(entry.config?.max_lease_ttl)}
                    </td>
                    <td class="row-actions" data-label="Actions">
                      {!system && (
                        <>
                          <button type="button" onClick={() => setTuning(tuning === mountPath ? null : mountPath)}>
                            Tune
                          </button>
                          <button
                            type="button"
                            onClick={() =>
                              row.run(async () => {
                                await api('PUT', 'sys/plugins/reload/backend', { mounts: [mountPath] });
                                return `Reloaded ${mountPath}`;
                              })
                            }
                          >
                            Reload
                          </button>
                          <ConfirmButton
                            label="Disable"
                            message={`Disable ${mountPath}? Every key and value stored under it is deleted, and tokens it issued are revoked.`}
                            onConfirm={() =>
                              row.run(async () => {
                                await api('DELETE', `sys/mounts/${seg(mountPath)}`);
                                mounts.reload();
                                return `Disabled ${mountPath}`;
                              })
                            }
                          />
                        </>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
      {tuning && <TuneForm key={tuning} path={tuning} onDone={() => { setTuning(null); mounts.reload(); }} />}
    </>
  );
}

/** A mount's TTL as it would be typed ("1h"); 0 means the system's default. */
function ttl(seconds: number | undefined): string {
  return seconds ? formatDuration(seconds) : 'system default';
}

function TuneForm({ path, onDone }: { path: string; onDone: () => void }) {
  const current = useLoad<Json>(() => api('GET', `sys/mounts/${seg(path)}/tune`), [path]);
  const [values, setValues] = useState<Record<string, string>>({});
  const tune = useAction<void>();
  const stored = (key: string) => current.data?.data?.[key] ?? current.data?.[key];
  // The server answers TTLs in seconds; they are shown as typed ("1h"), which it reads back the same.
  const value = (key: string) => values[key] ?? (key.endsWith('_ttl') ? (stored(key) ? formatDuration(stored(key)) : '') : String(stored(key) ?? ''));
  const set = (key: string) => (e: { currentTarget: HTMLInputElement }) => setValues({ ...values, [key]: e.currentTarget.value });
  return (
    <Section title={`Tune ${path}`}>
      <Errors error={current.error} />
      {/* The form waits for the current values, so nothing typed is overwritten when they arrive. */}
      {current.data && (
      <Form
        submit="Save tuning"
        busy={tune.busy}
        error={tune.error}
        onSubmit={() =>
          tune.run(async () => {
            await api('POST', `sys/mounts/${seg(path)}/tune`, values);
            onDone();
          })
        }
      >
        <Field label="Default lease TTL" hint="a duration such as 768h, or seconds">
          <input value={value('default_lease_ttl')} placeholder="system default" onInput={set('default_lease_ttl')} />
        </Field>
        <Field label="Max lease TTL">
          <input value={value('max_lease_ttl')} placeholder="system default" onInput={set('max_lease_ttl')} />
        </Field>
        <Field label="Description">
          <input value={value('description')} onInput={set('description')} />
        </Field>
      </Form>
      )}
    </Section>
  );
}
