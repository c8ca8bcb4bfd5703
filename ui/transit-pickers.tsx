/**
 * Choosing a transit mount and a key from what the server has, so a mistyped name is not sent:
 * encrypt creates a key it does not find (as in Vault), and every other tool answers "not found".
 * A token that may not list mounts or keys types the name instead.
 */
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, api, list, seg } from './api.js';
import { Errors, Field, useLoad } from './components.js';

/** The transit mounts (without the trailing slash); null when the token may not read sys/mounts; undefined while loading. */
export function useTransitMounts(): string[] | null | undefined {
  const [mounts, setMounts] = useState<string[] | null | undefined>(undefined);
  useEffect(() => {
    api('GET', 'sys/mounts').then(
      (body) => {
        const table = (body?.data ?? body) as Record<string, { type?: string }>;
        setMounts(
          Object.entries(table)
            .filter(([, entry]) => entry?.type === 'transit')
            .map(([path]) => path.replace(/\/$/, '')),
        );
      },
      () => setMounts(null),
    );
  }, []);
  return mounts;
}

/** A mount's keys; null when the token may not list them. */
export function useTransitKeys(mount: string): { data: string[] | null | undefined; error: unknown; reload: () => void } {
  return useLoad<string[] | null>(
    () =>
      list(`${seg(mount)}/keys`).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 403) return null;
        throw err;
      }),
    [mount],
  );
}

export function MountPicker({ mount, onMount }: { mount: string; onMount: (mount: string) => void }) {
  const mounts = useTransitMounts();
  // The default "transit" may not exist here: the first mount there is is chosen instead, before
  // the list is painted, so that a pick made as soon as it shows is never overridden.
  useLayoutEffect(() => {
    if (mounts && mounts.length > 0 && !mounts.includes(mount)) onMount(mounts[0]!);
  }, [mounts]);
  if (mounts === null || mounts?.length === 0) {
    return (
      <Field label="Transit mount" hint={mounts === null ? 'your token may not list the mounts: type the path' : 'no transit engine is enabled yet'}>
        <input required value={mount} onInput={(e) => onMount(e.currentTarget.value)} />
      </Field>
    );
  }
  return (
    <Field label="Transit mount">
      <select value={mount} disabled={mounts === undefined} onChange={(e) => onMount(e.currentTarget.value)}>
        {(mounts ?? [mount]).map((m) => (
          <option value={m}>{m}/</option>
        ))}
      </select>
    </Field>
  );
}

const OTHER = '\u0000other';

/**
 * The key: a list of the mount's keys, with "Another name…" for one not listed (encrypt then asks
 * before it creates it); a text field when the token may not list keys.
 */
export function KeyPicker(props: { mount: string; keys: string[] | null | undefined; error: unknown; keyName: string; onKey: (name: string) => void }) {
  const { keys, keyName, onKey } = props;
  const [other, setOther] = useState(false);
  // A layout effect: the default is picked before the list is painted. A plain effect runs a frame
  // later with the name as it was at render, and overrode a key picked as soon as the list showed.
  useLayoutEffect(() => {
    if (!keys || keys.length === 0) return;
    // A name typed under "Another name…" that now exists (encrypt created it) is picked from the list.
    if (other && keys.includes(keyName)) setOther(false);
    else if (!other && !keys.includes(keyName)) onKey(keys[0]!);
  }, [keys]);
  if (keys === null || props.error || keys?.length === 0) {
    const hint = keys === null ? `your token may not list the keys of ${props.mount}/: type the name` : keys?.length === 0 ? `${props.mount}/ has no keys yet` : undefined;
    return (
      <>
        <Field label="Key name" {...(hint ? { hint } : {})}>
          <input required value={keyName} onInput={(e) => onKey(e.currentTarget.value)} />
        </Field>
        <Errors error={props.error} />
      </>
    );
  }
  return (
    <>
      <Field label="Key name">
        <select
          value={other ? OTHER : keyName}
          disabled={keys === undefined}
          onChange={(e) => {
            const value = e.currentTarget.value;
            setOther(value === OTHER);
            onKey(value === OTHER ? '' : value);
          }}
        >
          {(keys ?? []).map((name) => (
            <option value={name}>{name}</option>
          ))}
          <option value={OTHER}>Another name…</option>
        </select>
      </Field>
      {other && (
        <Field label="Other key name" hint="not in the list: encrypt asks before it creates a key">
          <input required value={keyName} onInput={(e) => onKey(e.currentTarget.value)} />
        </Field>
      )}
    </>
  );
}

/**
 * Whether encrypting with `name` would create a key: "absent" (it would), "present" (it would
 * not, or the token may not create one: transit asks for the create capability on the encrypt
 * path before it upserts), "unknown" (the token may not read the key but may create it).
 */
export async function keyPresence(mount: string, name: string, known: readonly string[] | null | undefined): Promise<'present' | 'absent' | 'unknown'> {
  if (known?.includes(name)) return 'present';
  try {
    await api('GET', `${seg(mount)}/keys/${seg(name)}`);
    return 'present';
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return 'absent';
  }
  const path = `${mount}/encrypt/${name}`;
  try {
    const body = await api('POST', 'sys/capabilities-self', { paths: [path] });
    const granted: string[] = body?.data?.[path] ?? body?.[path] ?? [];
    return granted.includes('create') || granted.includes('root') ? 'unknown' : 'present';
  } catch {
    return 'unknown';
  }
}
