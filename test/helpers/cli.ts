/** The `keywarden` command as a user runs it: bin/keywarden.js in a child process. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/keywarden.js');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI with exactly `env` (nothing inherited, so no VAULT_* variable of the machine leaks
 * in) and `input` on standard input; standard output is a pipe, not a terminal.
 */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv, input = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
