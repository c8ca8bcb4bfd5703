/**
 * The production server as a user runs it: `node bin/keywarden.js server -config FILE`, a child
 * process on LevelDB that starts sealed; init and unseal over HTTP; real signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Api } from './http.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../bin/keywarden.js');

export interface ChildServer {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT`, from the server's own "listening" log line. */
  readonly address: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ChildConfig {
  readonly dataDir: string;
  readonly logLevel?: string;
  readonly listener?: Record<string, unknown>;
  /** More top-level settings, as the configuration file names them. */
  readonly settings?: Record<string, unknown>;
}

/** Writes a production config (LevelDB, plain HTTP on an ephemeral loopback port) and returns its path. */
export async function writeConfig(dir: string, config: ChildConfig): Promise<string> {
  const file = path.join(dir, 'keywarden.json');
  await writeFile(
    file,
    JSON.stringify({
      listener: { tcp: { address: '127.0.0.1:0', tls_disable: true, ...(config.listener ?? {}) } },
      storage: { leveldb: { path: config.dataDir } },
      log_level: config.logLevel ?? 'info',
      ...(config.settings ?? {}),
    }),
  );
  return file;
}

/**
 * Starts the server and resolves once it listens; rejects (with its output) if it exits first.
 * One worker unless asked for more, so the suite does not start a process per core.
 */
export async function spawnServer(configFile: string, cwd: string, timeoutMs = 30_000, workers = 1): Promise<ChildServer> {
  const child = spawn(process.execPath, [BIN, 'server', `-workers=${workers}`, '-config', configFile], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes('"listening"')) continue;
        try {
          const entry = JSON.parse(line) as { msg?: string; address?: string };
          if (entry.msg === 'listening' && entry.address) {
            clearTimeout(timer);
            resolve(entry.address);
            return;
          }
        } catch {
          // A partial line; the rest comes with the next chunk.
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  return { child, address, output: () => output, exited };
}

export interface InitResult {
  /** Shares as hex. */
  readonly keys: string[];
  readonly keysBase64: string[];
  readonly rootToken: string;
}

export async function initialize(api: Api, shares = 1, threshold = 1): Promise<InitResult> {
  const res = await api.expect('PUT', 'sys/init', { secret_shares: shares, secret_threshold: threshold }, [200]);
  return { keys: res.json.keys as string[], keysBase64: res.json.keys_base64 as string[], rootToken: res.json.root_token as string };
}

/** Submits shares until the server reports it is unsealed. */
export async function unsealWith(api: Api, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    const res = await api.expect('PUT', 'sys/unseal', { key }, [200]);
    if (res.json.sealed === false) return;
  }
  throw new Error('still sealed after every share');
}
