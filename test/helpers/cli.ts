/** The `keywarden` command as a user runs it: bin/keywarden.js in a child process. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess, type ProcessRun } from './process.js';

export const CLI_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/keywarden.js');

export type CliRun = ProcessRun;

/**
 * Runs the CLI with exactly `env` (nothing inherited, so no VAULT_* variable of the machine leaks
 * in) and `input` on standard input; standard output is a pipe, not a terminal.
 */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv, input = '', onStderr?: (soFar: string) => void): Promise<CliRun> {
  return runProcess(process.execPath, [CLI_BIN, ...args], { env, input, ...(onStderr ? { onStderr } : {}) });
}
