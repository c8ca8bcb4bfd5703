/** Starts the real server (dev mode, LevelDB, its own process) for HTTP benchmarks. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface BenchServer {
  readonly address: string;
  readonly token: string;
  readonly child: ChildProcess;
  /** Milliseconds from spawn to the printed address (the server is unsealed by then). */
  readonly startupMs: number;
  request(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/**
 * Starts the server in a temporary directory. With `BENCH_PROFILE=<dir>` in the environment the
 * server runs under `node --cpu-prof` and writes its CPU profile into that directory when it stops
 * (open it in Chrome DevTools, or summarise it with bench/lib/profile-summary.ts). `root` is the
 * checkout whose build runs (default this one; a benchmark may compare it with another build), and
 * `node` the Node binary it runs on (default this process's; BENCH_BASELINE_NODE sets it for a
 * baseline, to compare two Node versions on one build). `setup` (mounts, keys) runs once it serves.
 * A server that does not start, or whose setup fails, is stopped before the error is thrown, so a
 * benchmark that fails to start a second server (a baseline's) leaves only its first to stop.
 */
export async function startBenchServer(root = ROOT, node = process.execPath, setup?: (server: BenchServer) => Promise<void>): Promise<BenchServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-bench-'));
  const profileDir = process.env.BENCH_PROFILE;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
  const started = performance.now();
  const child = spawn(
    node,
    [...profile, path.join(root, 'bin/keywarden.js'), 'server', '-dev', ...oneWorker(root), '-dev-listen-address=127.0.0.1:0', `-dev-plugin-dir=${path.join(root, 'dist/bench/plugins')}`],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  try {
    const deadline = Date.now() + 30_000;
    while (!/Root Token: (\S+)/.test(output) || !/VAULT_ADDR='([^']+)'/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const startupMs = performance.now() - started;
    const address = /VAULT_ADDR='([^']+)'/.exec(output)![1]!;
    const token = /Root Token: (\S+)/.exec(output)![1]!;
    const server: BenchServer = { address, token, child, startupMs, request: jsonRequest(address, () => token), stop };
    await setup?.(server);
    return server;
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * `-workers=1` for a build that has workers (one process, whose CPU time the benchmarks read); a
 * baseline build from before them knows no such flag and is one process anyway.
 */
function oneWorker(root: string): string[] {
  return existsSync(path.join(root, 'dist/core/cluster/workers.js')) ? ['-workers=1'] : [];
}

/** A JSON request to a bench server's API with the token `token()` gives; an error answer throws. */
export function jsonRequest(address: string, token: () => string) {
  return async (method: string, p: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${address}/v1/${p}`, {
      method,
      headers: { 'X-Vault-Token': token(), 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}
