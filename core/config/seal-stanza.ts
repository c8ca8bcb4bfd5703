/**
 * The configuration file's `seal "<type>" { … }` stanza, with Vault's and OpenBao's names:
 * https://developer.hashicorp.com/vault/docs/configuration/seal/transit,
 * https://developer.hashicorp.com/vault/docs/configuration/seal/awskms and
 * https://openbao.org/docs/configuration/seal/static/. Read strictly like every other block; the
 * environment's fallbacks (VAULT_TOKEN, the AWS_* variables) and the keys behind `env://` and `file://` are
 * read when the server starts (core/seal/auto-seals.ts), so the parsed configuration holds no key
 * it was not given literally.
 */
import path from 'node:path';
import type { HclObject, HclValue } from '../hcl.js';
import { blockBodies, boolean, fail, fieldsOf, integer, string, whereOf, type Field, type SourceFile, type Where } from './config-values.js';
import type { AwsKmsSealConfig, KeySource, SealCommon, SealStanza, StaticSealConfig, TransitSealConfig } from './settings.js';

/** What every seal type refuses, with the reason, rather than ignore. */
const REFUSED: Readonly<Record<string, string>> = {
  namespace: 'Keywarden has no namespaces, and a transit seal on another server is addressed by mount_path alone; remove namespace',
};

const STATIC_KEYS = ['current_key_id', 'current_key', 'previous_key_id', 'previous_key'] as const;
const TRANSIT_KEYS = [
  'address', 'token', 'mount_path', 'key_name', 'key_id_prefix', 'disable_renewal',
  'tls_ca_cert', 'tls_client_cert', 'tls_client_key', 'tls_server_name', 'tls_skip_verify',
] as const;
const AWSKMS_KEYS = ['region', 'access_key', 'secret_key', 'session_token', 'kms_key_id', 'endpoint'] as const;

/** What every stanza takes beside its type's settings (Vault's Seal HA names). */
const COMMON_KEYS = ['name', 'priority', 'disabled'] as const;

/**
 * The `seal` blocks of one file, by priority. With several, each needs a distinct `priority`, and
 * names (the type when unset) must differ; at least one must be enabled.
 */
export function readSealStanza(value: HclValue, where: Where, source: SourceFile): SealStanza[] {
  const blocks = blockBodies(value, where).flatMap((outer) => {
    if (outer.items.length === 0) fail(where, 'expected a labeled block such as seal "transit" { … }');
    return outer.items.flatMap((labeled) => {
      const labelWhere = whereOf(labeled, 'seal.', source);
      return blockBodies(labeled.value, labelWhere).map((body) => ({ label: labeled.key, where: labelWhere, body }));
    });
  });
  const stanzas = blocks.map(({ label, where: blockWhere, body }) => {
    const prefix = `seal.${label}.`;
    const own = body.items.filter((item) => !(COMMON_KEYS as readonly string[]).includes(item.key));
    const common = readCommon(fieldsOf(body.items.filter((item) => !own.includes(item)), prefix, source, COMMON_KEYS), label, blocks.length > 1, blockWhere);
    return { where: blockWhere, stanza: { ...readOne(label, { ...body, items: own }, blockWhere, source), ...common } as SealStanza };
  });
  const seen = new Map<string, Where>();
  const priorities = new Map<number, Where>();
  for (const { where: at, stanza } of stanzas) {
    const earlier = seen.get(stanza.name);
    if (earlier) fail(at, `two seal stanzas are named "${stanza.name}" (the other on line ${earlier.line}); give each a distinct name`);
    seen.set(stanza.name, at);
    const samePriority = priorities.get(stanza.priority);
    if (samePriority && stanzas.length > 1) fail(at, `priority ${stanza.priority} is taken by the stanza on line ${samePriority.line}; give each seal its own priority`);
    priorities.set(stanza.priority, at);
  }
  // Every stanza disabled is allowed: it moves the store back to Shamir shares (core/seal/migration.ts).
  return stanzas.map(({ stanza }) => stanza).sort((a, b) => a.priority - b.priority);
}

function readCommon(fields: Map<string, Field>, label: string, several: boolean, blockWhere: Where): SealCommon {
  const nameField = fields.get('name');
  const name = nameField ? string(nameField.value, nameField.where) : label;
  // Vault reads a seal's variables with `_<name>` appended when there are several: the name must fit in one.
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) fail(nameField!.where, 'must be letters, digits and "_" (it is appended to environment variable names)');
  const priorityField = fields.get('priority');
  if (several && !priorityField) fail(blockWhere, 'priority is required when there are several seal stanzas');
  const priority = priorityField ? integer(priorityField.value, priorityField.where) : 1;
  if (priority < 1) fail(priorityField!.where, 'must be 1 or more');
  const disabledField = fields.get('disabled');
  return { name, priority, disabled: disabledField ? boolean(disabledField.value, disabledField.where) : false };
}

/** One stanza's own settings, by its type. */
function readOne(label: string, body: { items: HclObject['items'] }, blockWhere: Where, source: SourceFile): StaticSealConfig | TransitSealConfig | AwsKmsSealConfig {
  const prefix = `seal.${label}.`;
  for (const item of body.items) {
    const refused = REFUSED[item.key];
    if (refused) fail(whereOf(item, prefix, source), `not supported: ${refused}`);
  }
  switch (label) {
    case 'static':
      return readStatic(fieldsOf(body.items, prefix, source, STATIC_KEYS), blockWhere, source);
    case 'transit':
      return readTransit(fieldsOf(body.items, prefix, source, TRANSIT_KEYS), blockWhere, source);
    case 'awskms':
      return readAwsKms(fieldsOf(body.items, prefix, source, AWSKMS_KEYS));
    case 'shamir':
      return fail(blockWhere, 'Shamir is the seal without a seal stanza; remove the stanza');
    default:
      return fail(blockWhere, `unknown seal type "${label}"; expected "awskms", "static" or "transit"`);
  }
}

function readStatic(fields: Map<string, Field>, blockWhere: Where, source: SourceFile): StaticSealConfig {
  const text = (key: string): string | undefined => {
    const field = fields.get(key);
    return field && (string(field.value, field.where) || fail(field.where, 'must not be empty'));
  };
  const key = (name: string): KeySource | undefined => {
    const field = fields.get(name);
    return field && keySource(field, source);
  };
  const currentKeyId = text('current_key_id') ?? fail(blockWhere, 'current_key_id is required');
  const currentKey = key('current_key') ?? fail(blockWhere, 'current_key is required');
  const previousKeyId = text('previous_key_id');
  const previousKey = key('previous_key');
  if ((previousKeyId === undefined) !== (previousKey === undefined)) {
    fail(fields.get('previous_key_id')?.where ?? fields.get('previous_key')!.where, 'previous_key and previous_key_id go together: set both or neither');
  }
  if (previousKeyId !== undefined && previousKeyId === currentKeyId) {
    fail(fields.get('previous_key_id')!.where, 'must differ from current_key_id: an id names one key');
  }
  return { type: 'static', currentKeyId, currentKey, ...(previousKey ? { previous: { keyId: previousKeyId!, key: previousKey } } : {}) };
}

/**
 * `env://NAME`, `file://PATH` (relative to the file's directory) or the key itself, base64 or hex.
 * A literal is checked here; what a reference holds is checked when the server starts.
 */
function keySource(field: Field, source: SourceFile): KeySource {
  const text = string(field.value, field.where);
  if (text.startsWith('env://')) {
    const name = text.slice('env://'.length);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(field.where, `"${name}" is not an environment variable name`);
    return { kind: 'env', name };
  }
  if (text.startsWith('file://')) {
    const file = text.slice('file://'.length);
    if (file === '') fail(field.where, 'file:// needs a path');
    return { kind: 'file', path: path.resolve(source.dir, file) };
  }
  // The value is a key: the message must not repeat it.
  if (decodeStaticKey(text) === undefined) fail(field.where, 'must be env://NAME, file://PATH, or a 32-byte key in base64 or hex');
  return { kind: 'literal', value: text };
}

/** A static seal key as OpenBao takes it: 32 bytes, as hex or base64 text (or raw, from a file). */
export function decodeStaticKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return Buffer.from(trimmed, 'base64');
  return undefined;
}

function readTransit(fields: Map<string, Field>, blockWhere: Where, source: SourceFile): TransitSealConfig {
  const text = (key: string): string | undefined => {
    const field = fields.get(key);
    return field && string(field.value, field.where);
  };
  const required = (key: string): string => {
    const value = text(key) ?? fail(blockWhere, `${key} is required`);
    return value || fail(fields.get(key)!.where, 'must not be empty');
  };
  const file = (key: string): string | undefined => {
    const value = text(key);
    return value ? path.resolve(source.dir, value) : undefined;
  };
  const flag = (key: string): boolean => {
    const field = fields.get(key);
    return field ? boolean(field.value, field.where) : false;
  };
  const address = required('address').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s?#]+$/.test(address)) fail(fields.get('address')!.where, `must be a URL like "https://transit.example:8200", got "${address}"`);
  const mountPath = required('mount_path').replace(/^\/+|\/+$/g, '');
  const keyName = required('key_name');
  if (!/^[\w.-]+$/.test(keyName)) fail(fields.get('key_name')!.where, 'must be a transit key name (letters, digits, "_", "-", ".")');
  const token = text('token');
  const clientCert = file('tls_client_cert');
  const clientKey = file('tls_client_key');
  if ((clientCert === undefined) !== (clientKey === undefined)) {
    fail(fields.get('tls_client_cert')?.where ?? fields.get('tls_client_key')!.where, 'tls_client_cert and tls_client_key go together');
  }
  const caCert = file('tls_ca_cert');
  const serverName = text('tls_server_name');
  return {
    type: 'transit',
    address,
    ...(token ? { token } : {}),
    mountPath,
    keyName,
    keyIdPrefix: text('key_id_prefix') ?? '',
    disableRenewal: flag('disable_renewal'),
    tls: {
      ...(caCert ? { caCert } : {}),
      ...(clientCert ? { clientCert, clientKey: clientKey! } : {}),
      ...(serverName ? { serverName } : {}),
      skipVerify: flag('tls_skip_verify'),
    },
  };
}

/** Every setting is optional here: the environment may give it when the server starts (awskms-seal.ts). */
function readAwsKms(fields: Map<string, Field>): AwsKmsSealConfig {
  const text = (key: string): string | undefined => {
    const field = fields.get(key);
    return field && (string(field.value, field.where) || fail(field.where, 'must not be empty'));
  };
  const region = text('region');
  if (region !== undefined && !/^[a-z0-9-]+$/.test(region)) fail(fields.get('region')!.where, `must be an AWS region such as "us-east-1", got "${region}"`);
  const accessKey = text('access_key');
  const secretKey = text('secret_key');
  const sessionToken = text('session_token');
  // The messages name the fields, never their values: they are credentials.
  if ((accessKey === undefined) !== (secretKey === undefined)) fail(fields.get('access_key')?.where ?? fields.get('secret_key')!.where, 'access_key and secret_key go together: set both or neither');
  if (sessionToken !== undefined && accessKey === undefined) fail(fields.get('session_token')!.where, 'session_token goes with access_key and secret_key');
  const kmsKeyId = text('kms_key_id');
  const endpoint = text('endpoint')?.replace(/\/+$/, '');
  if (endpoint !== undefined && !isEndpoint(endpoint)) fail(fields.get('endpoint')!.where, `must be a URL like "https://kms.us-east-1.amazonaws.com", got "${endpoint}"`);
  return {
    type: 'awskms',
    ...(region ? { region } : {}),
    ...(accessKey ? { accessKey, secretKey: secretKey! } : {}),
    ...(sessionToken ? { sessionToken } : {}),
    ...(kmsKeyId ? { kmsKeyId } : {}),
    ...(endpoint ? { endpoint } : {}),
  };
}

/** An endpoint is a bare `http(s)://host[:port]`: KMS is served at its root. */
export function isEndpoint(text: string): boolean {
  return /^https?:\/\/[^/\s?#@]+$/.test(text);
}
