/**
 * Policies: the list, an HCL editor (the server checks the policy; a parse error is marked at its
 * line), and a capabilities checker for a path. `root` is built in (every capability, no text) and
 * cannot be written, so it is listed but not offered for editing.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, list, seg } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, useAction, useLoad } from '../components.js';

/** The line a server parse error names ("failed to parse policy: line 3, column 7: …"). */
export function errorLine(error: unknown): number | undefined {
  if (!(error instanceof ApiError)) return undefined;
  for (const message of error.messages) {
    const match = /\bline (\d+)/.exec(message);
    if (match) return Number(match[1]);
  }
  return undefined;
}

export function Policies() {
  const names = useLoad<string[]>(() => list('sys/policies/acl'), []);
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const save = useAction<string>();
  const remove = useAction<string>();
  const open = async (policy: string) => {
    save.reset();
    const body = await api('GET', `sys/policies/acl/${seg(policy)}`);
    setName(policy);
    setText(body.data.policy ?? '');
  };
  const badLine = errorLine(save.error);
  const lines = text.split('\n');
  // Short policies still get an editor of a useful height.
  const padded = lines.length < 12 ? [...lines, ...Array<string>(12 - lines.length).fill('')] : lines;
  return (
    <>
      <Title>Policies</Title>
      <div class="split">
        <Section title="ACL policies">
          <Errors error={names.error} />
          <Errors error={remove.error} />
          <ul class="key-list">
            {(names.data ?? []).map((policy) => (
              <li>
                {policy === 'root' ? (
                  <span>
                    root <span class="muted">(built in: every capability; cannot be edited)</span>
                  </span>
                ) : (
                  <button type="button" class="link" onClick={() => open(policy)}>
                    {policy}
                  </button>
                )}
                {policy !== 'root' && policy !== 'default' && (
                  <ConfirmButton
                    label={`Delete ${policy}`}
                    class="danger small"
                    message={`Delete the policy ${policy}? Tokens that carry it lose what it grants.`}
                    onConfirm={() =>
                      remove.run(async () => {
                        await api('DELETE', `sys/policies/acl/${seg(policy)}`);
                        names.reload();
                        return policy;
                      })
                    }
                  />
                )}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => { setName(''); setText(''); save.reset(); }}>
            New policy
          </button>
        </Section>
        <Section title="Editor">
          <Form
            submit="Save policy"
            busy={save.busy}
            error={save.error}
            onSubmit={() =>
              save.run(async () => {
                await api('PUT', `sys/policies/acl/${seg(name)}`, { policy: text });
                names.reload();
                return `Saved ${name}`;
              })
            }
          >
            <Field label="Name">
              <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            {/*
              Long lines wrap rather than run out of sight. Behind the text area, a copy of the text
              in the same font and width, one row per line with its number, wraps the same way: the
              numbers stay beside their lines, and the area grows with the copy instead of scrolling.
            */}
            <div class="editor">
              <div class="gutter" aria-hidden="true">
                {padded.map((line, i) => (
                  <div class="line">
                    <span class={i + 1 === badLine ? 'number bad-line' : 'number'}>{i + 1}</span>
                    <span class="text">{line === '' ? ' ' : line}</span>
                  </div>
                ))}
              </div>
              <textarea
                aria-label="Policy (HCL)"
                spellcheck={false}
                value={text}
                aria-invalid={badLine !== undefined}
                onInput={(e) => setText(e.currentTarget.value)}
                onKeyDown={(e) => {
                  // Tab indents inside the editor; Escape then Tab leaves it, so the keyboard is never trapped.
                  if (e.key === 'Tab' && !e.shiftKey && !(e.currentTarget.dataset.escaped === '1')) {
                    e.preventDefault();
                    const area = e.currentTarget;
                    const at = area.selectionStart;
                    const next = `${text.slice(0, at)}  ${text.slice(area.selectionEnd)}`;
                    setText(next);
                    requestAnimationFrame(() => area.setSelectionRange(at + 2, at + 2));
                  }
                  e.currentTarget.dataset.escaped = e.key === 'Escape' ? '1' : '0';
                }}
              />
            </div>
            {badLine !== undefined && <p class="error-line">The server reports a problem on line {badLine} (marked).</p>}
            {save.result && <p class="ok" role="status">{save.result}</p>}
          </Form>
        </Section>
      </div>
      <CapabilitiesChecker />
    </>
  );
}

function CapabilitiesChecker() {
  const [path, setPath] = useState('');
  const [token, setToken] = useState('');
  const check = useAction<string[]>();
  return (
    <Section title="Check capabilities">
      <Form
        submit="Check"
        busy={check.busy}
        error={check.error}
        onSubmit={() =>
          check.run(async () => {
            const body = token
              ? await api('POST', 'sys/capabilities', { token, paths: [path] })
              : await api('POST', 'sys/capabilities-self', { paths: [path] });
            return (body.data?.[path] ?? body.data?.capabilities ?? []) as string[];
          })
        }
      >
        <Field label="Path" hint="e.g. transit/encrypt/orders">
          <input required value={path} onInput={(e) => setPath(e.currentTarget.value)} />
        </Field>
        <Field label="Token" hint="empty: your own token">
          <input type="password" autocomplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </Field>
        {check.result && (
          <p role="status" class="capabilities">
            Capabilities on <code>{path}</code>: <strong>{check.result.join(', ') || 'none'}</strong>
          </p>
        )}
      </Form>
    </Section>
  );
}
