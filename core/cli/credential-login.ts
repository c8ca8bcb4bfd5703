/**
 * The request of a `login -method=userpass` or `-method=approle`, as the vault CLI builds it
 * (https://developer.hashicorp.com/vault/docs/auth/userpass#via-the-cli): userpass names the user
 * in the path and asks for the password without echo when it is not given; approle sends its
 * role_id and secret_id.
 */
import { UsageError } from './client.js';
import type { Io } from './output.js';

export const CREDENTIAL_METHODS = ['userpass', 'approle'] as const;
export type CredentialMethod = (typeof CREDENTIAL_METHODS)[number];

export function isCredentialMethod(method: string): method is CredentialMethod {
  return (CREDENTIAL_METHODS as readonly string[]).includes(method);
}

/** The fields each method takes (the vault CLI's names). */
const FIELDS: Readonly<Record<CredentialMethod, readonly string[]>> = {
  userpass: ['username', 'password'],
  approle: ['role_id', 'secret_id'],
};

function single(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`${name} must be given once`);
  return value;
}

/**
 * The path (under the mount `mount`) and body of a login.
 * @throws UsageError for an unknown or repeated field, or a missing one that cannot be asked for.
 */
export async function credentialLogin(method: CredentialMethod, mount: string, fields: Record<string, unknown>, io: Io): Promise<{ path: string; body: Record<string, unknown> }> {
  const known = FIELDS[method];
  for (const key of Object.keys(fields)) if (!known.includes(key)) throw new UsageError(`unknown login field "${key}" (known: ${known.join(', ')})`);
  if (method === 'userpass') {
    const username = single(fields, 'username');
    if (!username) throw new UsageError("'username' must be specified");
    const password = single(fields, 'password') ?? (await io.secret('Password (will be hidden): '));
    if (password === undefined) throw new UsageError('no password given, and no terminal to ask for one');
    return { path: `auth/${mount}/login/${encodeURIComponent(username)}`, body: { password } };
  }
  const roleId = single(fields, 'role_id');
  if (!roleId) throw new UsageError("'role_id' must be specified");
  const secretId = single(fields, 'secret_id');
  return { path: `auth/${mount}/login`, body: { role_id: roleId, ...(secretId !== undefined ? { secret_id: secretId } : {}) } };
}
