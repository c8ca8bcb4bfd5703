/** Audit devices: the enabled ones, enable a file device, disable one. */
import { useState } from 'preact/hooks';
import { api, seg, type Json } from '../api.js';
import { ConfirmButton, Errors, Field, Form, Section, Title, useAction, useLoad } from '../components.js';

export function AuditDevices() {
  const devices = useLoad<Record<string, Json>>(async () => {
    const body = await api('GET', 'sys/audit');
    return (body?.data ?? body) as Record<string, Json>;
  }, []);
  const [path, setPath] = useState('file');
  const [filePath, setFilePath] = useState('');
  const enable = useAction<void>();
  const disable = useAction<void>();
  return (
    <>
      <Title>Audit devices</Title>
      <Section title="Enabled devices">
        <Errors error={devices.error} />
        <Errors error={disable.error} />
        {devices.data && Object.keys(devices.data).length === 0 && <p class="muted">No audit device is enabled.</p>}
        {devices.data && Object.keys(devices.data).length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Type</th>
                <th scope="col">File</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(devices.data).map(([devicePath, device]) => (
                <tr>
                  <td>
                    <code>{devicePath}</code>
                  </td>
                  <td>{device.type}</td>
                  <td>{device.options?.file_path ?? '—'}</td>
                  <td>
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
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title="Enable a file device">
        <Form
          submit="Enable"
          busy={enable.busy}
          error={enable.error}
          onSubmit={() =>
            enable.run(async () => {
              await api('PUT', `sys/audit/${seg(path)}`, { type: 'file', options: { file_path: filePath } });
              devices.reload();
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
    </>
  );
}
