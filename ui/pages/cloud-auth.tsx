/**
 * The cloud auth method: client and identity configuration, roles (create, edit, delete, every
 * bound_* field checked before it is sent), the identity access list, the role-tag deny list, tidy.
 */
import { useState } from 'preact/hooks';
import { api, list, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, formatDuration, useAction, useLoad } from '../components.js';

/** What each bound_* value must look like; the server checks again, and its message is shown too. */
const BOUND_FIELDS: readonly { name: string; pattern: RegExp; example: string }[] = [
  { name: 'bound_iam_principal_arn', pattern: /^arn:[\w-]+:(iam|sts)::(\d{12}|\*):[\w+=,.@/*-]+$/, example: 'arn:aws:iam::123456789012:role/app or …:user/*' },
  { name: 'bound_account_id', pattern: /^\d{12}$/, example: '123456789012' },
  { name: 'bound_region', pattern: /^[a-z]{2}(-[a-z]+)+-\d$/, example: 'eu-west-1' },
  { name: 'bound_ami_id', pattern: /^ami-[0-9a-f]{8,17}$/, example: 'ami-0abc1234' },
  { name: 'bound_vpc_id', pattern: /^vpc-[0-9a-f]{8,17}$/, example: 'vpc-0abc1234' },
  { name: 'bound_subnet_id', pattern: /^subnet-[0-9a-f]{8,17}$/, example: 'subnet-0abc1234' },
  { name: 'bound_ec2_instance_id', pattern: /^i-[0-9a-f]{8,17}$/, example: 'i-0abc1234def567890' },
  { name: 'bound_iam_role_arn', pattern: /^arn:[\w-]+:iam::\d{12}:role\/[\w+=,.@/*-]+$/, example: 'arn:aws:iam::123456789012:role/web*' },
  { name: 'bound_iam_instance_profile_arn', pattern: /^arn:[\w-]+:iam::\d{12}:instance-profile\/[\w+=,.@/*-]+$/, example: 'arn:aws:iam::123456789012:instance-profile/web' },
];

function csv(value: string): string[] {
  return value.split(',').map((v) => v.trim()).filter(Boolean);
}

/** Each bound_* value that does not look right, named with the field and an example. */
export function boundProblems(values: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const field of BOUND_FIELDS) {
    for (const value of csv(values[field.name] ?? '')) {
      if (!field.pattern.test(value)) problems.push(`${field.name}: "${value}" does not look like ${field.example}`);
    }
  }
  return problems;
}

export function CloudAuth() {
  const [mount, setMount] = useState('cloud');
  const base = `auth/${seg(mount)}`;
  return (
    <>
      <Title>Cloud auth</Title>
      <div class="toolbar">
        <Field label="Auth mount" hint="under auth/">
          <input value={mount} onInput={(e) => setMount(e.currentTarget.value)} />
        </Field>
      </div>
      <div class="grid">
        <ConfigForm key={`${base}c`} title="Client configuration" path={`${base}/config/client`} fields={['access_key', 'secret_key', 'sts_endpoint', 'iam_endpoint', 'ec2_endpoint', 'sts_region', 'max_retries']} secret="secret_key" />
        <ConfigForm key={`${base}i`} title="Identity configuration" path={`${base}/config/identity`} fields={['iam_alias', 'ec2_alias', 'iam_metadata', 'ec2_metadata']} />
      </div>
      <Roles key={`${base}r`} base={base} />
      <div class="grid">
        <Listing key={`${base}a`} title="Identity access list" base={base} name="identity-accesslist" />
        <Listing key={`${base}d`} title="Role-tag deny list" base={base} name="roletag-denylist" />
      </div>
    </>
  );
}

function ConfigForm({ title, path, fields, secret }: { title: string; path: string; fields: readonly string[]; secret?: string }) {
  const current = useLoad<Json>(() => api('GET', path).catch(() => undefined), [path]);
  const [values, setValues] = useState<Record<string, string>>({});
  const save = useAction<string>();
  const shown = (field: string) => values[field] ?? (field === secret ? '' : String(current.data?.data?.[field] ?? ''));
  return (
    <Section title={title}>
      <Form
        submit="Save"
        busy={save.busy}
        error={save.error}
        onSubmit={() =>
          save.run(async () => {
            const body: Record<string, string | string[]> = {};
            for (const [field, value] of Object.entries(values)) body[field] = field.endsWith('_metadata') ? csv(value) : value;
            await api('POST', path, body);
            setValues({});
            current.reload();
            return 'Saved';
          })
        }
      >
        {fields.map((field) => (
          <Field label={field}>
            {field === secret ? (
              <input type="password" autocomplete="off" value={shown(field)} onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })} />
            ) : (
              <input value={shown(field)} onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })} />
            )}
          </Field>
        ))}
        {save.result && <p class="ok" role="status">{save.result}</p>}
      </Form>
    </Section>
  );
}

const ROLE_TEXT_FIELDS = ['token_policies', 'token_ttl', 'token_max_ttl', 'inferred_entity_type', 'inferred_cloud_region'] as const;

function Roles({ base }: { base: string }) {
  const roles = useLoad<string[]>(() => list(`${base}/role`), [base]);
  const [name, setName] = useState('');
  const [authType, setAuthType] = useState('iam');
  const [resolveIds, setResolveIds] = useState(true);
  const [values, setValues] = useState<Record<string, string>>({});
  const [problems, setProblems] = useState<string[]>([]);
  const save = useAction<string>();
  const remove = useAction<void>();
  const edit = async (role: string) => {
    const body = await api('GET', `${base}/role/${seg(role)}`);
    const loaded: Record<string, string> = {};
    for (const [key, value] of Object.entries(body.data as Record<string, unknown>)) {
      // The server answers TTLs in seconds; they are shown as typed ("1h"), which it reads back the same.
      loaded[key] = Array.isArray(value) ? value.join(', ') : key.endsWith('_ttl') && typeof value === 'number' ? formatDuration(value) : typeof value === 'object' && value !== null ? JSON.stringify(value) : String((value ?? '') as string | number | boolean);
    }
    setName(role);
    setAuthType(String(body.data.auth_type));
    setResolveIds(body.data.resolve_cloud_unique_ids !== false);
    setValues(loaded);
  };
  const input = (field: string, hint?: string) => (
    <Field label={field} {...(hint ? { hint } : {})}>
      <input value={values[field] ?? ''} onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })} />
    </Field>
  );
  return (
    <Section title="Roles">
      <Errors error={roles.error} />
      <Errors error={remove.error} />
      <ul class="key-list">
        {(roles.data ?? []).map((role) => (
          <li>
            <button type="button" class="link" onClick={() => edit(role)}>
              {role}
            </button>
            <ConfirmButton
              label={`Delete ${role}`}
              class="danger small"
              message={`Delete the role ${role}? Workloads can no longer log in with it.`}
              onConfirm={() =>
                remove.run(async () => {
                  await api('DELETE', `${base}/role/${seg(role)}`);
                  roles.reload();
                })
              }
            />
          </li>
        ))}
      </ul>
      <Form
        submit="Save role"
        busy={save.busy}
        error={save.error}
        onSubmit={() => {
          const found = boundProblems(values);
          setProblems(found);
          if (found.length > 0) return;
          return save.run(async () => {
            const body: Record<string, unknown> = { auth_type: authType, resolve_cloud_unique_ids: resolveIds };
            for (const field of [...BOUND_FIELDS.map((f) => f.name), 'token_policies']) if (values[field] !== undefined) body[field] = csv(values[field]!);
            for (const field of ['token_ttl', 'token_max_ttl', 'inferred_entity_type', 'inferred_cloud_region']) if (values[field]) body[field] = values[field];
            await api('POST', `${base}/role/${seg(name)}`, body);
            roles.reload();
            return `Saved ${name}`;
          });
        }}
      >
        <Field label="Role name">
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Auth type">
          <select value={authType} onChange={(e) => setAuthType(e.currentTarget.value)}>
            <option value="iam">iam</option>
            <option value="ec2">ec2</option>
          </select>
        </Field>
        {BOUND_FIELDS.map((field) => input(field.name, `comma-separated, e.g. ${field.example}`))}
        <label class="check">
          <input type="checkbox" checked={resolveIds} onChange={(e) => setResolveIds(e.currentTarget.checked)} /> resolve_cloud_unique_ids (bind to the
          principal's unique ID, looked up with the client configuration's keys; cannot be turned off later)
        </label>
        {ROLE_TEXT_FIELDS.map((field) => input(field))}
        {problems.length > 0 && (
          <div class="error" role="alert">
            {problems.map((p) => (
              <p>{p}</p>
            ))}
          </div>
        )}
        {save.result && <p class="ok" role="status">{save.result}</p>}
      </Form>
    </Section>
  );
}

function Listing({ title, base, name }: { title: string; base: string; name: string }) {
  const entries = useLoad<string[]>(() => list(`${base}/${name}`), [base, name]);
  const [buffer, setBuffer] = useState('72h');
  const action = useAction<string>();
  return (
    <Section title={title}>
      <Errors error={entries.error} />
      <Errors error={action.error} />
      {entries.data && entries.data.length === 0 && <p class="muted">Empty.</p>}
      <ul class="key-list">
        {(entries.data ?? []).map((entry) => (
          <li>
            <code>{entry}</code>
            <ConfirmButton
              label={`Remove ${entry}`}
              class="danger small"
              message={`Remove ${entry} from the ${title.toLowerCase()}?`}
              onConfirm={() =>
                action.run(async () => {
                  await api('DELETE', `${base}/${name}/${seg(entry)}`);
                  entries.reload();
                  return `Removed ${entry}`;
                })
              }
            />
          </li>
        ))}
      </ul>
      <div class="form-row">
        <Field label="Tidy: safety buffer">
          <input value={buffer} onInput={(e) => setBuffer(e.currentTarget.value)} />
        </Field>
        <ConfirmButton
          label="Tidy"
          message={`Remove expired entries of the ${title.toLowerCase()} (older than the safety buffer ${buffer})?`}
          onConfirm={() =>
            action.run(async () => {
              await api('POST', `${base}/tidy/${name}`, { safety_buffer: buffer });
              entries.reload();
              return 'Tidied';
            })
          }
        />
      </div>
      {action.result && <p class="ok" role="status">{action.result}</p>}
    </Section>
  );
}
