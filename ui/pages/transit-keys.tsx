/**
 * Transit keys: list, create (every type and option), and for one key its versions, configuration,
 * rotate, trim, delete, export, backup download and restore upload. The chosen key's details open
 * beside the list, above the create and restore forms, so they are seen without scrolling.
 */
import { useState } from 'preact/hooks';
import { api, list, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Output, Section, Title, download, formatDuration, formatTime, useAction, useLoad } from '../components.js';
import { MountPicker } from '../transit-pickers.js';

export const KEY_TYPES = [
  'aes256-gcm96',
  'aes128-gcm96',
  'chacha20-poly1305',
  'ed25519',
  'ecdsa-p256',
  'ecdsa-p384',
  'ecdsa-p521',
  'rsa-2048',
  'rsa-3072',
  'rsa-4096',
  'hmac',
] as const;

export function TransitKeys() {
  const [mount, setMount] = useState('transit');
  const [selected, setSelected] = useState<string | null>(null);
  const keys = useLoad<string[]>(() => list(`${seg(mount)}/keys`), [mount]);
  return (
    <>
      <Title>Transit keys</Title>
      <div class="toolbar">
        <MountPicker mount={mount} onMount={(m) => { setMount(m); setSelected(null); }} />
      </div>
      <div class="split">
        <Section title="Keys">
          <Errors error={keys.error} />
          {keys.data && keys.data.length === 0 && <p class="muted">No keys yet.</p>}
          {keys.data && keys.data.length > 0 && (
            <ul class="key-list">
              {keys.data.map((name) => (
                <li>
                  <button type="button" class="link" aria-pressed={selected === name} onClick={() => setSelected(name)}>
                    {name}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </Section>
        <div class="stack">
          {selected && <KeyDetail key={`${mount}/${selected}`} mount={mount} name={selected} onDeleted={() => { setSelected(null); keys.reload(); }} />}
          <CreateKey mount={mount} onCreated={(name) => { keys.reload(); setSelected(name); }} />
          <RestoreKey mount={mount} onRestored={(name) => { keys.reload(); if (name) setSelected(name); }} />
        </div>
      </div>
    </>
  );
}

function CreateKey({ mount, onCreated }: { mount: string; onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<string>('aes256-gcm96');
  const [flags, setFlags] = useState({ derived: false, convergent_encryption: false, exportable: false, allow_plaintext_backup: false });
  const [keySize, setKeySize] = useState('');
  const [autoRotate, setAutoRotate] = useState('');
  const create = useAction<void>();
  const flag = (key: keyof typeof flags, label: string) => (
    <label class="check">
      <input type="checkbox" checked={flags[key]} onChange={(e) => setFlags({ ...flags, [key]: e.currentTarget.checked })} /> {label}
    </label>
  );
  return (
    <Section title="Create a key">
      <Form
        submit="Create key"
        busy={create.busy}
        error={create.error}
        onSubmit={() =>
          create.run(async () => {
            await api('POST', `${seg(mount)}/keys/${seg(name)}`, {
              type,
              ...flags,
              ...(keySize ? { key_size: keySize } : {}),
              ...(autoRotate ? { auto_rotate_period: autoRotate } : {}),
            });
            onCreated(name);
            setName('');
          })
        }
      >
        <Field label="Name">
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Type">
          <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {KEY_TYPES.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </Field>
        {flag('derived', 'Derived (every use supplies a context)')}
        {flag('convergent_encryption', 'Convergent encryption (needs derived)')}
        {flag('exportable', 'Exportable (cannot be undone)')}
        {flag('allow_plaintext_backup', 'Allow plaintext backup (cannot be undone)')}
        {type === 'hmac' && (
          <Field label="Key size (bytes)" hint="hmac keys: 32 to 512">
            <input type="number" value={keySize} onInput={(e) => setKeySize(e.currentTarget.value)} />
          </Field>
        )}
        <Field label="Auto-rotate period" hint="e.g. 720h; empty or 0: never">
          <input value={autoRotate} onInput={(e) => setAutoRotate(e.currentTarget.value)} />
        </Field>
      </Form>
    </Section>
  );
}

function RestoreKey({ mount, onRestored }: { mount: string; onRestored: (name: string) => void }) {
  const [backup, setBackup] = useState('');
  const [name, setName] = useState('');
  const [force, setForce] = useState(false);
  const restore = useAction<string>();
  return (
    <Section title="Restore a backup">
      <Form
        submit="Restore"
        {...(force ? { confirm: `Replace the existing key ${name || '(the backup\'s name)'} with the one in the backup? Its current versions are lost.` } : {})}
        busy={restore.busy}
        error={restore.error}
        onSubmit={() =>
          restore.run(async () => {
            await api('POST', `${seg(mount)}/restore${name ? `/${seg(name)}` : ''}`, { backup: backup.trim(), force });
            onRestored(name);
            return 'Restored';
          })
        }
      >
        <Field label="Backup file">
          <input
            type="file"
            onChange={async (e) => {
              const file = e.currentTarget.files?.[0];
              if (file) setBackup(await file.text());
            }}
          />
        </Field>
        <Field label="Name" hint="optional: restore under another name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} /> Replace an existing key of that name
        </label>
      </Form>
      {restore.result && <p class="ok" role="status">{restore.result}</p>}
    </Section>
  );
}

/** Versions as the server lists them: unix seconds for symmetric keys, objects with creation_time for key pairs. */
function versions(keys: Record<string, Json>): { version: string; created: string; publicKey?: string }[] {
  return Object.entries(keys ?? {}).map(([version, value]) =>
    typeof value === 'number'
      ? { version, created: formatTime(value) }
      : { version, created: formatTime(value.creation_time), ...(value.public_key ? { publicKey: value.public_key } : {}) },
  );
}

function KeyDetail({ mount, name, onDeleted }: { mount: string; name: string; onDeleted: () => void }) {
  const base = `${seg(mount)}/keys/${seg(name)}`;
  const key = useLoad<Json>(() => api('GET', base), [base]);
  const action = useAction<string>();
  const [trimTo, setTrimTo] = useState('');
  const [exportType, setExportType] = useState('encryption-key');
  const [exported, setExported] = useState<string | null>(null);
  const d = key.data?.data;
  const backupAllowed = Boolean(d?.exportable && d?.allow_plaintext_backup);
  const act = (done: string, work: () => Promise<unknown>) =>
    action.run(async () => {
      await work();
      key.reload();
      return done;
    });
  return (
    <Section title={`Key ${name}`} reveal>
      <Errors error={key.error} />
      <Errors error={action.error} />
      {action.result && <p class="ok" role="status">{action.result}</p>}
      {d && (
        <>
          <dl class="inline">
            <dt>Type</dt>
            <dd>{d.type}</dd>
            <dt>Latest version</dt>
            <dd>{d.latest_version}</dd>
            <dt>Min decryption / encryption version</dt>
            <dd>
              {d.min_decryption_version} / {d.min_encryption_version}
            </dd>
            <dt>Derived</dt>
            <dd>{String(d.derived)}</dd>
            <dt>Exportable</dt>
            <dd>{String(d.exportable)}</dd>
            <dt>Plaintext backup allowed</dt>
            <dd>{String(d.allow_plaintext_backup)}</dd>
            <dt>Deletion allowed</dt>
            <dd>{String(d.deletion_allowed)}</dd>
            <dt>Auto-rotate period</dt>
            <dd>{d.auto_rotate_period ? formatDuration(d.auto_rotate_period) : 'never'}</dd>
          </dl>
          <h3>Versions</h3>
          <table>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {versions(d.keys).map((v) => (
                <tr>
                  <td>{v.version}</td>
                  <td>{v.created}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="actions">
            <button type="button" onClick={() => act(`Rotated ${name}`, () => api('POST', `${base}/rotate`))}>
              Rotate
            </button>
            {/* A backup holds the key in plaintext: the server gives one only when both flags are set, as Vault does. */}
            {backupAllowed && (
              <button
                type="button"
                onClick={() =>
                  action.run(async () => {
                    const body = await api('GET', `${seg(mount)}/backup/${seg(name)}`);
                    download(`${name}.backup`, body.data.backup);
                    return `Backup of ${name} downloaded`;
                  })
                }
              >
                Download backup
              </button>
            )}
            <ConfirmButton
              label="Delete key"
              message={`Delete ${name} and every version of it? Anything encrypted with it can no longer be decrypted.`}
              onConfirm={() =>
                action.run(async () => {
                  await api('DELETE', base);
                  onDeleted();
                  return `Deleted ${name}`;
                })
              }
            />
          </div>
          {!backupAllowed && (
            <p class="hint">No backup can be taken: it needs both exportable and allow plaintext backup (under Configuration; neither can be undone).</p>
          )}
          <KeyConfig base={base} current={d} onSaved={() => key.reload()} />
          <div class="form-row">
            <Field label="Trim: keep versions from" hint="deletes older versions for good; at most the min decryption version">
              <input type="number" value={trimTo} onInput={(e) => setTrimTo(e.currentTarget.value)} />
            </Field>
            <ConfirmButton
              label="Trim"
              message={`Delete every version of ${name} below ${trimTo || '(none given)'}? Data encrypted with them can no longer be decrypted.`}
              onConfirm={() => act(`Trimmed ${name}`, () => api('POST', `${base}/trim`, { min_available_version: Number(trimTo) }))}
            />
          </div>
          <div class="form-row">
            <Field label="Export">
              <select value={exportType} onChange={(e) => setExportType(e.currentTarget.value)}>
                <option value="encryption-key">encryption-key</option>
                <option value="signing-key">signing-key</option>
                <option value="hmac-key">hmac-key</option>
                <option value="public-key">public-key</option>
                <option value="certificate-chain">certificate-chain</option>
              </select>
            </Field>
            <button
              type="button"
              onClick={() =>
                action.run(async () => {
                  const body = await api('GET', `${seg(mount)}/export/${exportType}/${seg(name)}`);
                  setExported(JSON.stringify(body.data.keys, null, 2));
                  return `Exported ${exportType}`;
                })
              }
            >
              Export
            </button>
          </div>
          {exported && <Output label="Exported keys" value={exported} />}
        </>
      )}
    </Section>
  );
}

function KeyConfig({ base, current, onSaved }: { base: string; current: Json; onSaved: () => void }) {
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const save = useAction<void>();
  const text = (key: string, label: string, hint?: string, shown: (value: Json) => string = String) => (
    <Field label={label} {...(hint ? { hint } : {})}>
      <input value={String(values[key] ?? shown(current[key] ?? ''))} onInput={(e) => setValues({ ...values, [key]: e.currentTarget.value })} />
    </Field>
  );
  const check = (key: string, label: string) => (
    <label class="check">
      <input type="checkbox" checked={Boolean(values[key] ?? current[key])} onChange={(e) => setValues({ ...values, [key]: e.currentTarget.checked })} /> {label}
    </label>
  );
  return (
    <details class="config">
      <summary>Configuration</summary>
      <Form
        submit="Save configuration"
        busy={save.busy}
        error={save.error}
        onSubmit={() =>
          save.run(async () => {
            await api('POST', `${base}/config`, values);
            setValues({});
            onSaved();
          })
        }
      >
        {text('min_decryption_version', 'Min decryption version')}
        {text('min_encryption_version', 'Min encryption version', '0: the latest')}
        {text('auto_rotate_period', 'Auto-rotate period', 'e.g. 720h; 0: never', (seconds) => formatDuration(Number(seconds)))}
        {check('deletion_allowed', 'Deletion allowed')}
        {check('exportable', 'Exportable (cannot be undone)')}
        {check('allow_plaintext_backup', 'Allow plaintext backup (cannot be undone)')}
      </Form>
    </details>
  );
}
