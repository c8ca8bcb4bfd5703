/** Runs a command to its end, as a user would in a shell, and gives back what it printed. */
import { spawn } from 'node:child_process';

export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Standard input; empty when omitted. */
  readonly input?: string;
  /** Told what the command has written to standard error so far, each time it writes more (to act on a prompt). */
  readonly onStderr?: (soFar: string) => void;
}

export function runProcess(command: string, args: readonly string[], options: RunOptions): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env, ...(options.cwd ? { cwd: options.cwd } : {}), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      options.onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    // A command that exits without reading its standard input closes the pipe first; ending it
    // then fails with EPIPE, which is no failure of the command (its exit code and output tell).
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(options.input ?? '');
  });
}
