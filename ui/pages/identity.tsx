/**
 * Identity: entities and groups (docs/identity.md). Each screen lists by name, opens one into an
 * editor (name, policies, metadata; an entity's disabled flag and aliases, a group's members),
 * saves it with Vault's identity API and deletes after confirming. Nothing here is secret: ids,
 * names, policies and metadata are what the API answers to any reader of these paths.
 */
import { useState } from 'preact/hooks';
import { api, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, lines, useAction, useLoad } from '../components.js';

interface Named {
  readonly id: string;
  readonly name: string;
}

/** A LIST by id with `key_info`: each record's id and name, by name. */
async function listNamed(path: string): Promise<Named[]> {
  try {
    const body = await api('GET', `${path}?list=true`);
    const info: Record<string, { name?: string }> = body?.data?.key_info ?? {};
    return ((body?.data?.keys as string[] | undefined) ?? []).map((id) => ({ id, name: info[id]?.name ?? id })).sort((a, b) => a.name.localeCompare(b.name));
  } catch (err) {
    if ((err as { status?: number }).status === 404) return [];
    throw err;
  }
}

/** Metadata as the operator types it: one `key=value` a line. */
function metadataText(metadata: Record<string, string> | null | undefined): string {
  return Object.entries(metadata ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

function parseMetadata(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`metadata: "${line}" is not key=value`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

function policyList(text: string): string[] {
  return text.split(',').map((p) => p.trim()).filter(Boolean);
}

export function Entities() {
  const entities = useLoad(() => listNamed('identity/entity/id'), []);
  const [current, setCurrent] = useState<Json>(null);
  const [name, setName] = useState('');
  const [policies, setPolicies] = useState('');
  const [metadata, setMetadata] = useState('');
  const [disabled, setDisabled] = useState(false);
  const save = useAction<string>();
  const remove = useAction<string>();
  const load = (entity: Json) => {
    setCurrent(entity);
    setName(entity?.name ?? '');
    setPolicies((entity?.policies ?? []).join(', '));
    setMetadata(metadataText(entity?.metadata));
    setDisabled(entity?.disabled === true);
  };
  const open = (id: string) =>
    save.run(async () => {
      load((await api('GET', `identity/entity/id/${seg(id)}`)).data);
      return '';
    });
  return (
    <>
      <Title>Entities</Title>
      <div class="split">
        <Section title="Entities">
          <Errors error={entities.error} />
          <Errors error={remove.error} />
          <ul class="key-list">
            {(entities.data ?? []).map((entity) => (
              <li>
                <button type="button" class="link" aria-pressed={current?.id === entity.id} onClick={() => open(entity.id)}>
                  {entity.name}
                </button>
                <ConfirmButton
                  label={`Delete ${entity.name}`}
                  class="danger small"
                  message={`Delete the entity ${entity.name} and its aliases? Tokens of its logins lose the policies it and its groups grant.`}
                  onConfirm={() =>
                    remove.run(async () => {
                      await api('DELETE', `identity/entity/id/${seg(entity.id)}`);
                      if (current?.id === entity.id) load(null);
                      entities.reload();
                      return entity.name;
                    })
                  }
                />
              </li>
            ))}
          </ul>
          {entities.data?.length === 0 && <p class="muted">No entities yet.</p>}
          <button type="button" onClick={() => { load(null); save.reset(); }}>
            New entity
          </button>
        </Section>
        <Section title={current ? `Entity ${current.name}` : 'New entity'}>
          <Form
            submit={current ? 'Save entity' : 'Create entity'}
            busy={save.busy}
            error={save.error}
            onSubmit={() =>
              save.run(async () => {
                const body = { name: name.trim(), policies: policyList(policies), metadata: parseMetadata(metadata), disabled };
                const id = current ? current.id : (await api('POST', 'identity/entity', body)).data.id;
                if (current) await api('POST', `identity/entity/id/${seg(id)}`, body);
                load((await api('GET', `identity/entity/id/${seg(id)}`)).data);
                entities.reload();
                return `Saved ${body.name}`;
              })
            }
          >
            {current && (
              <p>
                ID <code>{current.id}</code>
              </p>
            )}
            <Field label="Name">
              <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <Field label="Policies" hint="comma-separated; they join the policies of every token of this entity">
              <input value={policies} onInput={(e) => setPolicies(e.currentTarget.value)} />
            </Field>
            <Field label="Metadata" hint="one key=value a line">
              <textarea rows={3} value={metadata} onInput={(e) => setMetadata(e.currentTarget.value)} />
            </Field>
            <label class="check">
              <input type="checkbox" checked={disabled} onChange={(e) => setDisabled(e.currentTarget.checked)} /> Disabled (its tokens are refused at their next use)
            </label>
            {save.result && <p class="ok" role="status">{save.result}</p>}
          </Form>
          {current && <EntityLinks entity={current} />}
        </Section>
      </div>
    </>
  );
}

/** An entity's aliases (one per auth mount it logs in through) and the groups it belongs to. */
function EntityLinks({ entity }: { entity: Json }) {
  const aliases: Json[] = entity.aliases ?? [];
  const groups = useLoad(() => listNamed('identity/group/id').catch(() => [] as Named[]), [entity.id]);
  const groupName = (id: string) => groups.data?.find((group) => group.id === id)?.name ?? id;
  return (
    <>
      <h3>Aliases</h3>
      {aliases.length === 0 ? (
        <p class="muted">No aliases.</p>
      ) : (
        <table class="stack-narrow" aria-label="Aliases">
          <thead>
            <tr>
              <th>Name</th>
              <th>Mount</th>
              <th>Type</th>
            </tr>
          </thead>
          <tbody>
            {aliases.map((alias) => (
              <tr>
                <td>{alias.name}</td>
                <td>
                  <code>{alias.mount_path}</code>
                </td>
                <td>{alias.mount_type}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Groups</h3>
      <p aria-label="Groups">{(entity.group_ids ?? []).length === 0 ? <span class="muted">None.</span> : (entity.group_ids as string[]).map(groupName).join(', ')}</p>
    </>
  );
}

export function Groups() {
  const groups = useLoad(() => listNamed('identity/group/id'), []);
  const entities = useLoad(() => listNamed('identity/entity/id').catch(() => [] as Named[]), []);
  const [current, setCurrent] = useState<Json>(null);
  const [name, setName] = useState('');
  const [type, setType] = useState<'internal' | 'external'>('internal');
  const [policies, setPolicies] = useState('');
  const [metadata, setMetadata] = useState('');
  const [memberEntities, setMemberEntities] = useState<string[]>([]);
  const [memberGroups, setMemberGroups] = useState<string[]>([]);
  const save = useAction<string>();
  const remove = useAction<string>();
  const load = (group: Json) => {
    setCurrent(group);
    setName(group?.name ?? '');
    setType(group?.type ?? 'internal');
    setPolicies((group?.policies ?? []).join(', '));
    setMetadata(metadataText(group?.metadata));
    setMemberEntities(group?.member_entity_ids ?? []);
    setMemberGroups(group?.member_group_ids ?? []);
  };
  const open = (id: string) =>
    save.run(async () => {
      load((await api('GET', `identity/group/id/${seg(id)}`)).data);
      return '';
    });
  const toggle = (list: string[], set: (next: string[]) => void, id: string, on: boolean) => set(on ? [...list.filter((x) => x !== id), id] : list.filter((x) => x !== id));
  const otherGroups = (groups.data ?? []).filter((group) => group.id !== current?.id);
  return (
    <>
      <Title>Groups</Title>
      <div class="split">
        <Section title="Groups">
          <Errors error={groups.error} />
          <Errors error={remove.error} />
          <ul class="key-list">
            {(groups.data ?? []).map((group) => (
              <li>
                <button type="button" class="link" aria-pressed={current?.id === group.id} onClick={() => open(group.id)}>
                  {group.name}
                </button>
                <ConfirmButton
                  label={`Delete ${group.name}`}
                  class="danger small"
                  message={`Delete the group ${group.name}? Its members lose the policies it grants.`}
                  onConfirm={() =>
                    remove.run(async () => {
                      await api('DELETE', `identity/group/id/${seg(group.id)}`);
                      if (current?.id === group.id) load(null);
                      groups.reload();
                      return group.name;
                    })
                  }
                />
              </li>
            ))}
          </ul>
          {groups.data?.length === 0 && <p class="muted">No groups yet.</p>}
          <button type="button" onClick={() => { load(null); save.reset(); }}>
            New group
          </button>
        </Section>
        <Section title={current ? `Group ${current.name}` : 'New group'}>
          <Form
            submit={current ? 'Save group' : 'Create group'}
            busy={save.busy}
            error={save.error}
            onSubmit={() =>
              save.run(async () => {
                const body = {
                  name: name.trim(),
                  policies: policyList(policies),
                  metadata: parseMetadata(metadata),
                  // An external group's members come from its alias at login; the server refuses them here.
                  ...(type === 'internal' ? { member_entity_ids: memberEntities, member_group_ids: memberGroups } : {}),
                };
                const id = current ? current.id : (await api('POST', 'identity/group', { ...body, type })).data.id;
                if (current) await api('POST', `identity/group/id/${seg(id)}`, body);
                load((await api('GET', `identity/group/id/${seg(id)}`)).data);
                groups.reload();
                return `Saved ${body.name}`;
              })
            }
          >
            {current && (
              <p>
                ID <code>{current.id}</code>
              </p>
            )}
            <Field label="Name">
              <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <Field label="Type" hint={current ? 'set when the group was created' : 'external: members come from a group alias at login'}>
              <select value={type} disabled={current !== null} onChange={(e) => setType(e.currentTarget.value as 'internal' | 'external')}>
                <option value="internal">internal</option>
                <option value="external">external</option>
              </select>
            </Field>
            <Field label="Policies" hint="comma-separated; every member, and the members of member groups, gets them">
              <input value={policies} onInput={(e) => setPolicies(e.currentTarget.value)} />
            </Field>
            <Field label="Metadata" hint="one key=value a line">
              <textarea rows={3} value={metadata} onInput={(e) => setMetadata(e.currentTarget.value)} />
            </Field>
            {type === 'internal' && (
              <>
                <fieldset class="batch">
                  <legend>Member entities</legend>
                  {(entities.data ?? []).length === 0 && <p class="muted">No entities.</p>}
                  {(entities.data ?? []).map((entity) => (
                    <label class="check">
                      <input type="checkbox" checked={memberEntities.includes(entity.id)} onChange={(e) => toggle(memberEntities, setMemberEntities, entity.id, e.currentTarget.checked)} />{' '}
                      {entity.name}
                    </label>
                  ))}
                </fieldset>
                <fieldset class="batch">
                  <legend>Member groups</legend>
                  {otherGroups.length === 0 && <p class="muted">No other groups.</p>}
                  {otherGroups.map((group) => (
                    <label class="check">
                      <input type="checkbox" checked={memberGroups.includes(group.id)} onChange={(e) => toggle(memberGroups, setMemberGroups, group.id, e.currentTarget.checked)} />{' '}
                      {group.name}
                    </label>
                  ))}
                </fieldset>
              </>
            )}
            {current?.type === 'external' && (
              <p aria-label="Group alias">
                Alias: {current.alias?.name ? <code>{`${current.alias.name} on ${current.alias.mount_path}`}</code> : <span class="muted">none yet</span>}
              </p>
            )}
            {save.result && <p class="ok" role="status">{save.result}</p>}
          </Form>
        </Section>
      </div>
    </>
  );
}
