/**
 * Transit tools: encrypt, decrypt, rewrap, data keys, HMAC, sign, verify, hash and random bytes.
 * Where the server takes batches (batch_input) a batch goes in one request; hash, which has none,
 * sends one request a line. Every result has a copy button. Mount and key are picked from lists;
 * encrypting with a key that does not exist asks first, since the server then creates it.
 */
import { useState } from 'preact/hooks';
import { api, fromBase64, seg, toBase64, type Json } from '../api.js';
import { BatchInput, Field, Form, Output, Title, lines, useAction, useConfirm } from '../components.js';
import { KeyPicker, MountPicker, keyPresence, useTransitKeys } from '../transit-pickers.js';

type ToolId = 'encrypt' | 'decrypt' | 'rewrap' | 'datakey' | 'hmac' | 'sign' | 'verify' | 'hash' | 'random';

interface Tool {
  readonly id: ToolId;
  readonly label: string;
  readonly needsKey: boolean;
  /** The request field each item fills, and whether the user's text is base64-encoded for it. */
  readonly item?: { readonly field: string; readonly label: string; readonly base64: boolean };
  /** The response field each item's result is read from. */
  readonly result?: string;
}

const TOOLS: readonly Tool[] = [
  { id: 'encrypt', label: 'Encrypt', needsKey: true, item: { field: 'plaintext', label: 'Plaintext', base64: true }, result: 'ciphertext' },
  { id: 'decrypt', label: 'Decrypt', needsKey: true, item: { field: 'ciphertext', label: 'Ciphertext', base64: false }, result: 'plaintext' },
  { id: 'rewrap', label: 'Rewrap', needsKey: true, item: { field: 'ciphertext', label: 'Ciphertext', base64: false }, result: 'ciphertext' },
  { id: 'datakey', label: 'Data key', needsKey: true },
  { id: 'hmac', label: 'HMAC', needsKey: true, item: { field: 'input', label: 'Input', base64: true }, result: 'hmac' },
  { id: 'sign', label: 'Sign', needsKey: true, item: { field: 'input', label: 'Input', base64: true }, result: 'signature' },
  { id: 'verify', label: 'Verify', needsKey: true, item: { field: 'input', label: 'Input and signature (or HMAC)', base64: true }, result: 'valid' },
  { id: 'hash', label: 'Hash', needsKey: false, item: { field: 'input', label: 'Input', base64: true }, result: 'sum' },
  { id: 'random', label: 'Random', needsKey: false },
];

interface ItemResult {
  readonly input: string;
  readonly value?: string;
  readonly error?: string;
}

export function TransitTools() {
  const [mount, setMount] = useState('transit');
  const [key, setKey] = useState('');
  const [toolId, setToolId] = useState<ToolId>('encrypt');
  const tool = TOOLS.find((t) => t.id === toolId)!;
  const keys = useTransitKeys(mount);
  return (
    <>
      <Title>Transit tools</Title>
      <div class="toolbar">
        <MountPicker mount={mount} onMount={setMount} />
        {tool.needsKey && <KeyPicker mount={mount} keys={keys.data} error={keys.error} keyName={key} onKey={setKey} />}
      </div>
      <div
        class="tabs"
        role="tablist"
        aria-label="Tools"
        onKeyDown={(e) => {
          // Arrow keys move between tools, as in any tab list; Tab then leaves the list.
          const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
          if (step === 0) return;
          e.preventDefault();
          const list = e.currentTarget;
          const next = TOOLS[(TOOLS.findIndex((t) => t.id === toolId) + step + TOOLS.length) % TOOLS.length]!;
          setToolId(next.id);
          requestAnimationFrame(() => (list.querySelector('[aria-selected="true"]') as HTMLElement | null)?.focus());
        }}
      >
        {TOOLS.map((t) => (
          <button type="button" role="tab" aria-selected={t.id === toolId} tabIndex={t.id === toolId ? 0 : -1} onClick={() => setToolId(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={tool.label} class="card">
        {tool.id === 'datakey' ? (
          <DataKey mount={mount} keyName={key} />
        ) : tool.id === 'random' ? (
          <RandomBytes mount={mount} />
        ) : (
          <ItemTool key={tool.id} tool={tool} mount={mount} keyName={key} knownKeys={keys.data} onKeyCreated={keys.reload} />
        )}
      </div>
    </>
  );
}

/** Splits a verify line at its last space: the input, then the signature or HMAC (which has no spaces). */
function splitVerifyLine(line: string): { input: string; proof: string } {
  const at = line.lastIndexOf(' ');
  return at < 0 ? { input: line, proof: '' } : { input: line.slice(0, at), proof: line.slice(at + 1) };
}

function ItemTool(props: { tool: Tool; mount: string; keyName: string; knownKeys: readonly string[] | null | undefined; onKeyCreated: () => void }) {
  const { tool, mount, keyName } = props;
  const [text, setText] = useState('');
  const [batch, setBatch] = useState(false);
  const [alreadyBase64, setAlreadyBase64] = useState(false);
  const [context, setContext] = useState('');
  const [algorithm, setAlgorithm] = useState('sha2-256');
  const [proof, setProof] = useState('');
  const [proofKind, setProofKind] = useState<'signature' | 'hmac'>('signature');
  const action = useAction<ItemResult[]>();
  const confirm = useConfirm('Encrypt', 'Create the key and encrypt');
  const item = tool.item!;

  const encode = (value: string) => (item.base64 && !alreadyBase64 ? toBase64(value) : value);
  const shown = (value: unknown) => {
    if (tool.id === 'decrypt' && typeof value === 'string' && !alreadyBase64) return fromBase64(value) ?? value;
    return String(value);
  };

  const runTool = async (): Promise<ItemResult[]> => {
    const items = batch ? lines(text) : [text];
    const entry = (raw: string) => {
      if (tool.id !== 'verify') return { [item.field]: encode(raw), ...(context ? { context: toBase64(context) } : {}) };
      const { input, proof: p } = batch ? splitVerifyLine(raw) : { input: raw, proof };
      return { input: encode(input), [proofKind]: p, ...(context ? { context: toBase64(context) } : {}) };
    };
    const path =
      tool.id === 'hash'
        ? `${seg(mount)}/hash/${algorithm}`
        : tool.id === 'hmac' || tool.id === 'sign' || tool.id === 'verify'
          ? `${seg(mount)}/${tool.id}/${seg(keyName)}/${algorithm}`
          : `${seg(mount)}/${tool.id}/${seg(keyName)}`;
    if (tool.id === 'hash') {
      // The hash endpoint takes one input a request.
      return Promise.all(
        items.map(async (raw) => {
          try {
            const body = await api('POST', path, { input: encode(raw) });
            return { input: raw, value: String(body.data.sum) };
          } catch (err) {
            return { input: raw, error: err instanceof Error ? err.message : String(err) };
          }
        }),
      );
    }
    if (!batch) {
      const body = await api('POST', path, entry(text));
      return [{ input: text, value: shown(body.data[tool.result!]) }];
    }
    const body = await api('POST', path, { batch_input: items.map(entry) });
    return (body.data.batch_results as Json[]).map((result, i) => ({
      input: items[i]!,
      ...(result.error ? { error: String(result.error) } : { value: shown(result[tool.result!]) }),
    }));
  };

  // Encrypt creates the key when there is none (Vault's upsert): a mistyped name would quietly
  // become a new key, so that is asked first.
  const submit = async () => {
    if (tool.id !== 'encrypt') return action.run(runTool);
    const presence = await keyPresence(mount, keyName, props.knownKeys);
    if (presence === 'present') return action.run(runTool);
    const kind = context ? 'derived aes256-gcm96' : 'aes256-gcm96';
    confirm.ask(
      presence === 'absent'
        ? `There is no key named "${keyName}" on ${mount}/. Encrypting creates a new ${kind} key of that name and encrypts with it.`
        : `Your token may not read the key "${keyName}" on ${mount}/, so whether it exists is unknown. If it does not, encrypting creates a new ${kind} key of that name.`,
      async () => {
        await action.run(runTool);
        props.onKeyCreated();
      },
    );
    return undefined;
  };

  const results = action.result;
  return (
    <>
    {confirm.dialog}
    <Form submit={tool.label} busy={action.busy} error={action.error} onSubmit={submit} label={`${tool.label} form`}>
      <BatchInput
        label={item.label}
        value={text}
        onChange={setText}
        batch={batch}
        onBatch={setBatch}
        {...(tool.id === 'verify' ? { placeholder: 'in a batch: input, a space, then its signature or HMAC' } : {})}
      />
      {item.base64 || tool.id === 'decrypt' ? (
        <label class="check">
          <input type="checkbox" checked={alreadyBase64} onChange={(e) => setAlreadyBase64(e.currentTarget.checked)} />{' '}
          {tool.id === 'decrypt' ? 'Show plaintext as base64' : 'Items are base64 already'}
        </label>
      ) : null}
      {(tool.id === 'hash' || tool.id === 'hmac' || tool.id === 'sign' || tool.id === 'verify') && (
        <Field label="Hash algorithm">
          <select value={algorithm} onChange={(e) => setAlgorithm(e.currentTarget.value)}>
            {['sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'].map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </Field>
      )}
      {tool.id === 'verify' && (
        <>
          <Field label="Checking">
            <select value={proofKind} onChange={(e) => setProofKind(e.currentTarget.value as 'signature' | 'hmac')}>
              <option value="signature">a signature</option>
              <option value="hmac">an HMAC</option>
            </select>
          </Field>
          {!batch && (
            <Field label={proofKind === 'signature' ? 'Signature' : 'HMAC'}>
              <input value={proof} onInput={(e) => setProof(e.currentTarget.value)} />
            </Field>
          )}
        </>
      )}
      {tool.id !== 'hash' && (
        <Field label="Context" hint="derived keys only (text; sent base64-encoded)">
          <input value={context} onInput={(e) => setContext(e.currentTarget.value)} />
        </Field>
      )}
    </Form>
    {results && <Results results={results} label={tool.result!} />}
    </>
  );
}

function Results({ results, label }: { results: readonly ItemResult[]; label: string }) {
  const all = results.map((r) => r.value ?? `error: ${r.error}`).join('\n');
  return (
    <div class="results" aria-live="polite">
      {results.length > 1 && <Output label={`All ${results.length} results`} value={all} />}
      {results.map((r, i) =>
        r.error ? (
          <p class="error" role="alert">
            Item {i + 1}: {r.error}
          </p>
        ) : (
          <Output label={results.length > 1 ? `${label} ${i + 1}` : label} value={r.value!} />
        ),
      )}
    </div>
  );
}

function DataKey({ mount, keyName }: { mount: string; keyName: string }) {
  const [kind, setKind] = useState<'plaintext' | 'wrapped'>('wrapped');
  const [bits, setBits] = useState('256');
  const action = useAction<Json>();
  const data = action.result?.data;
  return (
    <Form
      submit="Generate data key"
      busy={action.busy}
      error={action.error}
      onSubmit={() => action.run(() => api('POST', `${seg(mount)}/datakey/${kind}/${seg(keyName)}`, { bits: Number(bits) }))}
    >
      <Field label="Return">
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as 'plaintext' | 'wrapped')}>
          <option value="wrapped">wrapped only</option>
          <option value="plaintext">plaintext and wrapped</option>
        </select>
      </Field>
      <Field label="Bits">
        <select value={bits} onChange={(e) => setBits(e.currentTarget.value)}>
          <option value="128">128</option>
          <option value="256">256</option>
          <option value="512">512</option>
        </select>
      </Field>
      {data?.plaintext && <Output label="plaintext" value={data.plaintext} />}
      {data?.ciphertext && <Output label="ciphertext" value={data.ciphertext} />}
    </Form>
  );
}

function RandomBytes({ mount }: { mount: string }) {
  const [bytes, setBytes] = useState('32');
  const [format, setFormat] = useState('base64');
  const action = useAction<Json>();
  return (
    <Form
      submit="Generate random bytes"
      busy={action.busy}
      error={action.error}
      onSubmit={() => action.run(() => api('POST', `${seg(mount)}/random`, { bytes: Number(bytes), format }))}
    >
      <Field label="Bytes">
        <input type="number" value={bytes} onInput={(e) => setBytes(e.currentTarget.value)} />
      </Field>
      <Field label="Format">
        <select value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
          <option value="base64">base64</option>
          <option value="hex">hex</option>
        </select>
      </Field>
      {action.result?.data?.random_bytes && <Output label="random_bytes" value={action.result.data.random_bytes} />}
    </Form>
  );
}
