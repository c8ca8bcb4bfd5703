/** Unseal: one key share at a time, with the progress towards the threshold. */
import { useState } from 'preact/hooks';
import { api, type Json } from '../api.js';
import { Field, Form, Title, useAction } from '../components.js';

export function UnsealPage({ status, onStatus }: { status: Json; onStatus: (status: Json) => void }) {
  const [key, setKey] = useState('');
  const action = useAction<Json>();
  const send = (body: object) =>
    action.run(async () => {
      const next = await api('PUT', 'sys/unseal', body);
      setKey('');
      onStatus(next);
      return next;
    });
  return (
    <>
      <Title>Unseal</Title>
      <p>The server is sealed. Enter unseal key shares, one at a time, until {status.t} have been given.</p>
      <progress class="progress" aria-label="Unseal progress" max={status.t} value={status.progress} />
      <p class="progress-text" aria-live="polite">
        {status.progress} of {status.t} key shares given
      </p>
      <Form submit="Unseal" busy={action.busy} error={action.error} onSubmit={() => send({ key: key.trim() })}>
        <Field label="Unseal key share">
          <input type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </Field>
      </Form>
      {status.progress > 0 && (
        <div class="actions spaced">
          <button type="button" onClick={() => send({ reset: true })}>
            Start over (forget the shares given)
          </button>
        </div>
      )}
    </>
  );
}
