/**
 * The token helper file and the token a command uses: KEYWARDEN_TOKEN, then VAULT_TOKEN, then the
 * file `login` writes (0600, never through a symbolic link), as the vault CLI's token helper does.
 */
import { readFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writePrivateFile } from '../private-files.js';
import { errorMessage } from '../errors.js';
import { CommandError } from './client.js';

/** Where `login` keeps the token (0600), like Vault's ~/.vault-token but our own. */
export function tokenFile(env: NodeJS.ProcessEnv): string {
  return env.KEYWARDEN_TOKEN_FILE ?? path.join(env.HOME ?? os.homedir(), '.keywarden-token');
}

/** A token and where it came from, for messages ("the token from VAULT_TOKEN"). */
export interface FoundToken {
  readonly token: string | undefined;
  readonly source: string;
}

/** KEYWARDEN_TOKEN, then VAULT_TOKEN, then the token helper file. */
export async function storedToken(env: NodeJS.ProcessEnv): Promise<FoundToken> {
  if (env.KEYWARDEN_TOKEN) return { token: env.KEYWARDEN_TOKEN, source: 'from KEYWARDEN_TOKEN' };
  if (env.VAULT_TOKEN) return { token: env.VAULT_TOKEN, source: 'from VAULT_TOKEN' };
  const file = tokenFile(env);
  try {
    const text = (await readFile(file, 'utf8')).trim();
    return { token: text || undefined, source: `from ${file}` };
  } catch {
    return { token: undefined, source: `from ${file}` };
  }
}

/**
 * Stores the token in the token file (0600), never through a symbolic link at its path.
 * @throws CommandError (exit 2, as vault's "Error storing token") when it cannot be stored, saying why.
 */
export async function saveToken(env: NodeJS.ProcessEnv, token: string): Promise<string> {
  const file = tokenFile(env);
  try {
    // A directory it creates is private; an existing one (usually $HOME) is the user's to decide.
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writePrivateFile(file, token);
  } catch (err) {
    throw new CommandError(`Error storing token: ${errorMessage(err)}`, 2);
  }
  return file;
}
