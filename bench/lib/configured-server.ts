/**
 * Starts the real server from a configuration file (LevelDB, plain HTTP on a free port, its own
 * process), initializes it with one share, unseals it and mounts transit: for benchmarks that
 * compare configurations side by side, each server started the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonRequest } from './server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ConfiguredServer {
  readonly address: string;
  readonly token: string;
  readonly child: ChildProcess;
  /** What the server wrote to stdout and stderr so far (its log lines). */
  output(): string;
  request(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/**
 * `extra`: top-level configuration keys added to the file (JSON), e.g. `{ telemetry: { … } }`.
 * One worker unless `workers` says otherwise; `root` is the checkout whose build runs (this one by
 * default; a benchmark may compare it with another). With `BENCH_PROFILE=<dir>`, as for server.ts, the
 * server runs under `node --cpu-prof` and writes its profile there when it stops, with the
 * event loop's holds of over 10 ms (loop-holds.ts). `env`: variables added to the server's environment; BENCH_NODE_FLAGS
 * (space-separated, e.g. `--trace-gc`): flags for the server's node.
 */
export async function startConfiguredServer(extra: Record<string, unknown> = {}, workers = 1, root = ROOT, env: Record<string, string> = {}): Promise<ConfiguredServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-bench-'));
  const config = {
    listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } },
    storage: { leveldb: { path: 'data' } },
    log_level: 'info',
    ...extra,
  };
  await writeFile(path.join(dir, 'keywarden.json'), JSON.stringify(config));
  const profileDir = process.env.BENCH_PROFILE;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`, `--import=${path.join(ROOT, 'dist/bench/lib/loop-holds.js')}`] : [];
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeFlags, ...profile, path.join(root, 'bin/keywarden.js'), 'server', `-workers=${workers}`, `-config=${path.join(dir, 'keywarden.json')}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, ...(profileDir ? { BENCH_PROFILE: path.resolve(profileDir) } : {}) },
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const address = await listeningAddress(child, () => output, workers);
    let token = '';
    const request = jsonRequest(address, () => token);
    const init = await request('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 });
    await request('PUT', 'sys/unseal', { key: init.keys[0] });
    token = init.root_token;
    await request('POST', 'sys/mounts/transit', { type: 'transit' });
    return { address, token, child, output: () => output, request, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The address of the server's "listening" log line (info level logs events, never requests); with
 * several workers, once the primary logged that every one of them serves.
 */
async function listeningAddress(child: ChildProcess, output: () => string, workers: number): Promise<string> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited:\n${output()}`);
    const entries = output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.endsWith('}'))
      .map((line) => JSON.parse(line) as { msg?: string; address?: string });
    const address = entries.find((entry) => entry.msg === 'listening' && entry.address)?.address;
    if (address && (workers === 1 || entries.some((entry) => entry.msg === 'every worker serves'))) return address;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not listen:\n${output()}`);
}
