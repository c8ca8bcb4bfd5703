/** Output of CLI commands: `-format=table` (aligned key/value) or `-format=json`. */
export type OutputFormat = 'table' | 'json';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Reads all of standard input. */
  stdin(): Promise<string>;
  /** Prompts without echo (unseal keys); undefined when there is no terminal. */
  secret(prompt: string): Promise<string | undefined>;
}

export function parseFormat(raw: string | undefined): OutputFormat {
  if (raw === undefined || raw === 'table') return 'table';
  if (raw === 'json') return 'json';
  throw new Error(`unknown format "${raw}": use table or json`);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return 'n/a';
  if (Array.isArray(value)) return `[${value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(' ')}]`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Key/value rows, aligned: what `vault read` prints. */
export function table(rows: ReadonlyArray<readonly [string, unknown]>, headers: readonly [string, string] = ['Key', 'Value']): string {
  const width = Math.max(headers[0].length, ...rows.map(([k]) => k.length));
  const lines = [`${headers[0].padEnd(width)}    ${headers[1]}`, `${'-'.repeat(headers[0].length).padEnd(width)}    ${'-'.repeat(headers[1].length)}`];
  for (const [k, v] of rows) lines.push(`${k.padEnd(width)}    ${cell(v)}`);
  return `${lines.join('\n')}\n`;
}

/** A response's data (and auth block) as a table or the whole body as JSON. */
export function render(format: OutputFormat, body: any): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (format === 'json') return `${JSON.stringify(body ?? null, null, 2)}\n`;
  if (!body) return 'Success! Data written.\n';
  const rows: [string, unknown][] = [];
  if (body.auth) {
    const a = body.auth;
    rows.push(['token', a.client_token], ['token_accessor', a.accessor], ['token_duration', a.lease_duration], ['token_renewable', a.renewable], ['token_policies', a.token_policies ?? a.policies], ['policies', a.policies]);
    for (const [k, v] of Object.entries(a.metadata ?? {})) rows.push([`token_meta_${k}`, v]);
  }
  const data = body.data ?? (body.auth ? {} : body);
  for (const key of Object.keys(data ?? {}).sort()) rows.push([key, data[key]]);
  let text = rows.length > 0 ? table(rows) : 'Success! Data written.\n';
  if (Array.isArray(body.warnings) && body.warnings.length > 0) text = `WARNING! The following warnings were returned:\n\n  * ${body.warnings.join('\n  * ')}\n\n${text}`;
  return text;
}

/** A list response: one key per line under a header. */
export function renderList(format: OutputFormat, body: any): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (format === 'json') return `${JSON.stringify(body?.data?.keys ?? [], null, 2)}\n`;
  const keys: string[] = body?.data?.keys ?? [];
  return `Keys\n----\n${keys.join('\n')}\n`;
}
