/** Starts a helper server (bench/lib/<script>, compiled) in its own process; it prints its port on stdout. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function startHelper(script: string, urlPath: string): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [path.join(here, script)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}${urlPath}`, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}
