/**
 * The user model: a bcrypt hash of the password and the token settings of the user's logins,
 * stored as JSON under `user/<lower-case username>` (Vault's key). The password itself is never
 * stored, logged or returned.
 */
import { BadRequestError, type Storage, type WithTokenSettings } from '../../sdk/index.js';
import { DEFAULT_BCRYPT_COST, type PasswordHasher } from './hasher.js';

export const STORAGE_KEYS = {
  /** Users, by lower-cased username. */
  userPrefix: 'user/',
} as const;

export interface UserEntry extends WithTokenSettings {
  /** bcrypt (`$2a$`/`$2b$`/`$2y$`, cost 5 to 12). */
  password_hash: string;
}

/** bcrypt reads at most this many bytes of a password; a longer one would match on its first 72 alone. */
export const MAX_PASSWORD_BYTES = 72;

/**
 * The costs a pre-hashed password may have: OpenBao's bounds (5, htpasswd -B's default, so no weak
 * hash slips in; 12, so a login cannot be made arbitrarily slow).
 */
const MIN_IMPORTED_COST = 5;
const MAX_IMPORTED_COST = 12;

const BCRYPT_HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

const userKey = (username: string) => STORAGE_KEYS.userPrefix + username.toLowerCase();

export async function readUser(storage: Storage, username: string): Promise<UserEntry | undefined> {
  const raw = await storage.get(userKey(username));
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as UserEntry) : undefined;
}

export async function writeUser(storage: Storage, username: string, user: UserEntry): Promise<void> {
  await storage.put(userKey(username), Buffer.from(JSON.stringify(user), 'utf8'));
}

export async function deleteUser(storage: Storage, username: string): Promise<void> {
  await storage.delete(userKey(username));
}

export async function listUsers(storage: Storage): Promise<string[]> {
  return (await storage.list(STORAGE_KEYS.userPrefix)).filter((key) => !key.endsWith('/'));
}

/**
 * The new password hash from a write's `password` (hashed here) or `password_hash` (a bcrypt hash
 * made elsewhere, checked); exactly one of them. As in Vault.
 * @throws BadRequestError naming the problem.
 */
export async function passwordHashOf(hasher: PasswordHasher, password: string | undefined, passwordHash: string | undefined): Promise<string> {
  if (password && passwordHash) throw new BadRequestError('only one of password or password_hash may be provided');
  if (password) {
    if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
      throw new BadRequestError(`password is longer than ${MAX_PASSWORD_BYTES} bytes, the most bcrypt uses`);
    }
    return hasher.hash(password, DEFAULT_BCRYPT_COST);
  }
  if (!passwordHash) throw new BadRequestError('must provide either password or password_hash');
  const match = BCRYPT_HASH.exec(passwordHash);
  if (!match) throw new BadRequestError('password_hash is not a valid bcrypt hash');
  const cost = Number(match[1]);
  if (cost < MIN_IMPORTED_COST) throw new BadRequestError(`bcrypt cost of ${cost} is too low, want ${MIN_IMPORTED_COST} at minimum`);
  if (cost > MAX_IMPORTED_COST) throw new BadRequestError(`bcrypt cost of ${cost} exceeds maximum cost of ${MAX_IMPORTED_COST}`);
  return passwordHash;
}
