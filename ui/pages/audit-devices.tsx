/**
 * Audit devices: the enabled ones, and which of them the configuration file declares. Devices are
 * declared in that file (docs/deployment.md, "Audit devices"); the API creates one only when the
 * configuration sets unsafe_allow_api_audit_creation, so the form to enable one is shown only
 * then, and otherwise the page says where a device is declared. A declared device is removed by
 * taking its stanza out, so only devices created through the API offer "Disable".
 */
import { useState } from 'preact/hooks';
import { api, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, useAction, useLoad } from '../components.js';

/** What the configuration says about audit devices; null when the token may not read it (it needs sudo). */
interface AuditSettings {
  readonly apiCreation: boolean;
  readonly declared: ReadonlySet<string>;
}

export function AuditDevices() {
  const devices = useLoad<Record<string, Json>>(async () => {
    const body = await api('GET', 'sys/audit');
    return (body?.data ?? body) as Record<string, Json>;
  }, []);
  const settings = useLoad<AuditSettings | null>(
    () =>
      api('GET', 'sys/config/state/sanitized').then(
        (body) => {
          const config = body?.data ?? body;
          return {
            apiCreation: config?.unsafe_allow_api_audit_creation === true,
            declared: new Set(((config?.audits ?? []) as { path: string }[]).map((device) => device.path)),
          };
        },
        () => null,
      ),
    [],
  );
  const disable = useAction<void>();
  const known = settings.data;
  return (
    <>
      <Title>Audit devices</Title>
      <Section title="Enabled devices">
        <Errors error={devices.error} />
        <Errors error={disable.error} />
        {devices.data && Object.keys(devices.data).length === 0 && <p class="muted">No audit device is enabled.</p>}
        {devices.data && Object.keys(devices.data).length > 0 && (
          <table class="stack-narrow">
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Type</th>
                <th scope="col">Writes to</th>
                {known && <th scope="col">Declared</th>}
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(devices.data).map(([devicePath, device]) => {
                const declared = known?.declared.has(devicePath) ?? false;
                return (
                  <tr>
                    <td data-label="Path">
                      <code>{devicePath}</code>
                    </td>
                    <td data-label="Type">{device.type}</td>
                    <td data-label="Writes to">{device.options?.file_path ?? device.options?.address ?? device.options?.socket_path ?? '—'}</td>
                    {known && <td data-label="Declared">{declared ? 'in the configuration file' : 'through the API'}</td>}
                    <td data-label="Actions">
                      {declared ? (
                        <span class="muted">remove its stanza and reload</span>
                      ) : (
                        <ConfirmButton
                          label="Disable"
                          message={`Disable the audit device ${devicePath}? Requests are no longer recorded by it.`}
                          onConfirm={() =>
                            disable.run(async () => {
                              await api('DELETE', `sys/audit/${seg(devicePath)}`);
                              devices.reload();
                            })
                          }
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
      {known === undefined ? null : known?.apiCreation === false ? (
        <DeclaringDevices />
      ) : (
        <EnableFileDevice known={known !== null} onEnabled={devices.reload} />
      )}
    </>
  );
}

/** Where a device is declared, for a server that creates none through the API. */
function DeclaringDevices() {
  return (
    <Section title="Adding an audit device">
      <p>
        Audit devices are declared in the server's configuration file, not created here: this server's configuration does not
        set <code>unsafe_allow_api_audit_creation</code>, so the API refuses to create them. To add one, add a stanza such as
      </p>
      <pre class="snippet">
        {'audit "file" "file" {\n  options { file_path = "/var/log/keywarden/audit.log" }\n}'}
      </pre>
      <p>
        to the configuration file and reload the server (<code>kill -HUP</code> its process, or restart it): the device is
        enabled at once and listed above. To change or remove one, change or remove its stanza and reload. The types
        (<code>file</code>, <code>socket</code>, <code>syslog</code>) and their options are in the project's{' '}
        <code>docs/deployment.md</code>, under "Audit devices".
      </p>
    </Section>
  );
}

function EnableFileDevice({ known, onEnabled }: { known: boolean; onEnabled: () => void }) {
  const [path, setPath] = useState('file');
  const [filePath, setFilePath] = useState('');
  const enable = useAction<void>();
  return (
    <Section title="Enable a file device">
      <p class="hint">
        {known
          ? "This server's configuration sets unsafe_allow_api_audit_creation, so devices can also be created here, within the limits it sets."
          : 'Devices are declared in the configuration file; creating one here works only when the configuration sets unsafe_allow_api_audit_creation (your token may not read it).'}
      </p>
      <Form
        submit="Enable"
        busy={enable.busy}
        error={enable.error}
        onSubmit={() =>
          enable.run(async () => {
            await api('PUT', `sys/audit/${seg(path)}`, { type: 'file', options: { file_path: filePath } });
            onEnabled();
          })
        }
      >
        <Field label="Path">
          <input required value={path} onInput={(e) => setPath(e.currentTarget.value)} />
        </Field>
        <Field label="File path" hint="on the server; stdout writes to its standard output">
          <input required value={filePath} onInput={(e) => setFilePath(e.currentTarget.value)} />
        </Field>
      </Form>
    </Section>
  );
}
