/** Sign in with a token; it is kept for this tab only (sessionStorage). */
import { useState } from 'preact/hooks';
import { Field, Form, Title, useAction } from '../components.js';

export function LoginPage({ onLogin }: { onLogin: (token: string) => Promise<void> }) {
  const [token, setTokenValue] = useState('');
  const action = useAction<void>();
  return (
    <>
      <Title>Sign in</Title>
      <Form submit="Sign in" busy={action.busy} error={action.error} onSubmit={() => action.run(() => onLogin(token.trim()))}>
        <Field label="Token" hint="kept in this browser tab only, until you sign out or close it">
          <input type="password" autocomplete="off" required value={token} onInput={(e) => setTokenValue(e.currentTarget.value)} />
        </Field>
      </Form>
    </>
  );
}
