/**
 * First start: choose the number of key shares and the threshold; the shares and root token are
 * shown once. Shares are shown in base64, as `keywarden operator init` prints them (hex too, in a
 * fold), and can be saved as the file `operator init -format=json` writes.
 */
import { useState } from 'preact/hooks';
import { api, type Json } from '../api.js';
import { Field, Form, Output, Title, download, useAction } from '../components.js';

export function InitPage({ onDone }: { onDone: () => void }) {
  const [shares, setShares] = useState('5');
  const [threshold, setThreshold] = useState('3');
  const action = useAction<Json>();
  const result = action.result;

  if (result) {
    return (
      <>
        <Title>Keep these safe</Title>
        <p class="warning" role="status">
          The server is initialized. These unseal key shares and the root token are shown <strong>only once</strong>: store
          each share with a different person. Any {threshold} of them unseal the server.
        </p>
        {(result.keys_base64 as string[]).map((key, i) => (
          <Output label={`Unseal key ${i + 1}`} value={key} />
        ))}
        <Output label="Initial root token" value={result.root_token} />
        <details class="config">
          <summary>The same shares in hex</summary>
          {(result.keys as string[]).map((key, i) => (
            <Output label={`Unseal key ${i + 1} (hex)`} value={key} />
          ))}
        </details>
        <div class="actions">
          <button
            type="button"
            onClick={() =>
              download(
                `keywarden-init-${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}.json`,
                `${JSON.stringify(
                  {
                    unseal_keys_b64: result.keys_base64,
                    unseal_keys_hex: result.keys,
                    unseal_shares: Number(shares),
                    unseal_threshold: Number(threshold),
                    root_token: result.root_token,
                  },
                  null,
                  2,
                )}\n`,
                'application/json',
              )
            }
          >
            Download the shares and root token (JSON)
          </button>
          <button type="button" class="primary" onClick={onDone}>
            I have stored them — continue to unseal
          </button>
        </div>
      </>
    );
  }

  return (
    <>
      <Title>Initialize Keywarden</Title>
      <p>This server has no keys yet. Choose how many unseal key shares to make, and how many of them unseal it.</p>
      <Form
        submit="Initialize"
        busy={action.busy}
        error={action.error}
        onSubmit={() => action.run(() => api('PUT', 'sys/init', { secret_shares: Number(shares), secret_threshold: Number(threshold) }))}
      >
        <Field label="Key shares" hint="1 to 255">
          <input type="number" min={1} max={255} required value={shares} onInput={(e) => setShares(e.currentTarget.value)} />
        </Field>
        <Field label="Key threshold" hint="shares needed to unseal; at most the number of shares">
          <input type="number" min={1} max={255} required value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} />
        </Field>
      </Form>
    </>
  );
}
