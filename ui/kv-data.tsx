/**
 * A kv secret's data as Vault's UI shows it: each value masked until "Show" is pressed, with its
 * copy button, and the whole as JSON only on request. The editor takes key/value rows, each value
 * masked as a password field is until shown, or raw JSON; either becomes the object sent.
 */
import { useState } from 'preact/hooks';
import { CopyButton, Errors } from './components.js';

/** A value as text: strings as they are, anything else (numbers, lists, objects) as JSON. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function SecretData({ label, data }: { label: string; data: Record<string, unknown> }) {
  const [shown, setShown] = useState<ReadonlySet<string>>(new Set());
  const [json, setJson] = useState(false);
  const entries = Object.entries(data ?? {});
  const toggle = (key: string) => {
    const next = new Set(shown);
    if (!next.delete(key)) next.add(key);
    setShown(next);
  };
  const whole = JSON.stringify(data, null, 2);
  return (
    <div class="secret-data">
      <div class="output-head">
        <span class="label">{label}</span>
        <span class="actions">
          <button type="button" class="small" aria-pressed={json} onClick={() => setJson(!json)}>
            {json ? 'Hide JSON' : 'Show as JSON'}
          </button>
          {json && <CopyButton text={whole} name="the JSON" />}
        </span>
      </div>
      {json ? (
        <pre class="json" tabIndex={0} aria-label={label}>
          {whole}
        </pre>
      ) : entries.length === 0 ? (
        <p class="muted">No keys.</p>
      ) : (
        <table class="pairs" aria-label={label}>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {entries.map(([key, value]) => (
              <tr>
                <th scope="row">
                  <code>{key}</code>
                </th>
                <td class="secret-value">{shown.has(key) ? <code>{asText(value)}</code> : <span class="masked" aria-label="hidden">••••••••</span>}</td>
                <td>
                  <span class="row-actions">
                    <button type="button" class="small" aria-pressed={shown.has(key)} aria-label={`${shown.has(key) ? 'Hide' : 'Show'} ${key}`} onClick={() => toggle(key)}>
                      {shown.has(key) ? 'Hide' : 'Show'}
                    </button>
                    <CopyButton text={asText(value)} name={key} />
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

interface Row {
  readonly key: string;
  readonly value: string;
  /** The value was not a string: its text is JSON and is parsed back when sent, so its type stays. */
  readonly json: boolean;
  readonly shown: boolean;
}

/** What an editor holds: rows or JSON text, whichever the user edits in. */
export interface Draft {
  readonly mode: 'pairs' | 'json';
  readonly rows: readonly Row[];
  readonly json: string;
}

const EMPTY_ROW: Row = { key: '', value: '', json: false, shown: false };

export function draftOf(data: Record<string, unknown>): Draft {
  const rows = Object.entries(data).map(([key, value]) => ({ key, value: asText(value), json: typeof value !== 'string', shown: false }));
  return { mode: 'pairs', rows: rows.length > 0 ? rows : [EMPTY_ROW], json: '' };
}

/** The JSON object a user typed, or an error naming the problem (sent to no server). */
export function parseObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`data: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('data: expected a JSON object such as {"password": "…"}');
  return value as Record<string, unknown>;
}

/** The object a draft sends; an error names the row or key that is wrong. Rows left blank are skipped. */
export function readDraft(draft: Draft): Record<string, unknown> {
  if (draft.mode === 'json') return parseObject(draft.json);
  const data: Record<string, unknown> = {};
  draft.rows.forEach((row, i) => {
    const key = row.key.trim();
    if (key === '' && row.value === '') return;
    if (key === '') throw new Error(`data: row ${i + 1} has a value but no key`);
    if (Object.hasOwn(data, key)) throw new Error(`data: the key "${key}" is given twice`);
    if (!row.json) data[key] = row.value;
    else {
      try {
        data[key] = JSON.parse(row.value);
      } catch {
        throw new Error(`data: the value of "${key}" was not text and must stay valid JSON`);
      }
    }
  });
  return data;
}

/**
 * The editor: key/value rows or raw JSON (`<label> (JSON)`), switched with a radio pair. Switching
 * carries the data over; data that does not read (a key twice, broken JSON) keeps the mode and
 * says why.
 */
export function DataEditor({ label, draft, onChange }: { label: string; draft: Draft; onChange: (draft: Draft) => void }) {
  const [error, setError] = useState<unknown>(null);
  const setRow = (i: number, change: Partial<Row>) => onChange({ ...draft, rows: draft.rows.map((row, j) => (j === i ? { ...row, ...change } : row)) });
  const switchTo = (mode: Draft['mode']) => {
    if (mode === draft.mode) return;
    try {
      const data = readDraft(draft);
      onChange(mode === 'json' ? { mode, rows: draft.rows, json: JSON.stringify(data, null, 2) } : { ...draftOf(data), json: draft.json });
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <fieldset class="data-editor">
      <legend>{label}</legend>
      <div class="radios" role="radiogroup" aria-label={`${label}: edit as`}>
        <label>
          <input type="radio" checked={draft.mode === 'pairs'} onChange={() => switchTo('pairs')} /> Key/value
        </label>
        <label>
          <input type="radio" checked={draft.mode === 'json'} onChange={() => switchTo('json')} /> JSON
        </label>
      </div>
      <Errors error={error} />
      {draft.mode === 'json' ? (
        <textarea aria-label={`${label} (JSON)`} rows={6} spellcheck={false} value={draft.json} onInput={(e) => onChange({ ...draft, json: e.currentTarget.value })} />
      ) : (
        <>
          {draft.rows.map((row, i) => (
            <div class="pair">
              <input aria-label={`Key ${i + 1}`} autocomplete="off" spellcheck={false} value={row.key} onInput={(e) => setRow(i, { key: e.currentTarget.value })} />
              <ValueInput row={row} index={i} onValue={(value) => setRow(i, { value })} />
              <button type="button" class="small" aria-pressed={row.shown} aria-label={`${row.shown ? 'Hide' : 'Show'} value ${i + 1}`} onClick={() => setRow(i, { shown: !row.shown })}>
                {row.shown ? 'Hide' : 'Show'}
              </button>
              <button type="button" class="small" aria-label={`Remove row ${i + 1}`} onClick={() => onChange({ ...draft, rows: draft.rows.length > 1 ? draft.rows.filter((_, j) => j !== i) : [EMPTY_ROW] })}>
                Remove
              </button>
            </div>
          ))}
          <div class="actions">
            <button type="button" class="small" onClick={() => onChange({ ...draft, rows: [...draft.rows, EMPTY_ROW] })}>
              Add a key
            </button>
          </div>
        </>
      )}
    </fieldset>
  );
}

/**
 * A value: masked as a password field until shown. A password field drops line breaks, so a
 * hidden multi-line value (a PEM key) is read-only until shown, then edited in a text area.
 */
function ValueInput({ row, index, onValue }: { row: Row; index: number; onValue: (value: string) => void }) {
  const label = `Value ${index + 1}`;
  const multiline = row.value.includes('\n');
  if (row.shown && multiline) return <textarea aria-label={label} rows={4} spellcheck={false} value={row.value} onInput={(e) => onValue(e.currentTarget.value)} />;
  if (row.shown) return <input aria-label={label} autocomplete="off" spellcheck={false} value={row.value} onInput={(e) => onValue(e.currentTarget.value)} />;
  return (
    <input
      aria-label={label}
      type="password"
      autocomplete="off"
      readOnly={multiline}
      {...(multiline ? { title: 'several lines: Show to edit' } : {})}
      value={row.value}
      onInput={(e) => onValue(e.currentTarget.value)}
    />
  );
}
