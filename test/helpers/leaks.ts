/**
 * No test leaves a process running: a server, a database or a shell a test started, directly or
 * through its children, must be gone when the run ends, or the run fails naming it.
 *
 * Loaded by mocha before the test files (.mocharc.json `require`). Every process started through
 * node:child_process gets an environment variable naming this run and the place that started it;
 * the process's own children inherit it, so a server left behind by a shell a test ran is found
 * too, even once its parent has exited. The check runs as mocha's global teardown, after every
 * root `after` hook (the shared PostgreSQL server is stopped in one). Linux only: it reads /proc,
 * and does nothing where there is none.
 */
import childProcess from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
import type { Context } from 'mocha';

/** The variable every process a test starts gets; a test of a process's environment leaves it out. */
export const MARKER = 'KEYWARDEN_TEST_PROCESS';
/** Tells this run's processes from those of another run on the same machine. */
const RUN = `${process.pid}.${randomBytes(4).toString('hex')}`;
const GRACE_MS = 5_000;

interface Origin {
  /** Where in the tests the process was started: the first frame outside the shared helpers. */
  readonly site: string;
  /** The test that was running, or had last run, when it started. */
  readonly test: string;
}

const origins = new Map<string, Origin>();
let currentTest = '(before the first test)';

function originSite(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1).filter((frame) => frame.includes('/dist/test/') && !frame.includes('/helpers/leaks.js'));
  const site = frames.find((frame) => !/\/(?:helpers|support)\//.test(frame)) ?? frames[0] ?? 'outside the test files';
  return site.trim().replace(/^at /, '');
}

/** The same arguments, with the marker added to the options' environment (inserted when there are no options). */
function marked(args: unknown[]): unknown[] {
  const id = `${RUN}/${origins.size + 1}`;
  origins.set(id, { site: originSite(), test: currentTest });
  const out = [...args];
  const at = Array.isArray(out[1]) ? 2 : 1;
  const given = out[at];
  if (given !== null && typeof given === 'object') {
    const options = given as { env?: NodeJS.ProcessEnv };
    out[at] = { ...options, env: { ...(options.env ?? process.env), [MARKER]: id } };
  } else if (given === undefined) {
    out[at] = { env: { ...process.env, [MARKER]: id } };
  } else {
    out.splice(at, 0, { env: { ...process.env, [MARKER]: id } });
  }
  return out;
}

type AnyFunction = (...args: unknown[]) => unknown;
const patchable = childProcess as unknown as Record<string, AnyFunction & { [promisify.custom]?: AnyFunction }>;
for (const name of ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync']) {
  const original = patchable[name]!;
  const wrapper = Object.assign((...args: unknown[]) => original(...marked(args)), original);
  // exec and execFile promisify to { stdout, stderr }; keep that through the wrapper.
  const custom = original[promisify.custom];
  if (custom) Object.defineProperty(wrapper, promisify.custom, { value: (...args: unknown[]) => custom(...marked(args)) });
  patchable[name] = wrapper;
}
// `import { spawn } from 'node:child_process'` in test files and dependencies sees the wrappers too.
syncBuiltinESMExports();

interface Survivor {
  readonly pid: number;
  readonly command: string;
  readonly id: string;
}

async function survivors(): Promise<Survivor[]> {
  const found: Survivor[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = (await readFile(`/proc/${entry}/environ`, 'utf8')).split('\0');
      const id = environ.find((v) => v.startsWith(`${MARKER}=${RUN}/`))?.slice(MARKER.length + 1);
      if (!id) continue;
      const command = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ').trim();
      found.push({ pid: Number(entry), command, id });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

function stop(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

export const mochaHooks = {
  beforeEach(this: Context) {
    currentTest = this.currentTest?.fullTitle() ?? currentTest;
  },
};

export async function mochaGlobalTeardown(): Promise<void> {
  if (!(await readdir('/proc').then(() => true, () => false))) return;
  // A process stopped in an `after` hook may still be on its way out.
  let left = await survivors();
  for (const deadline = Date.now() + GRACE_MS; left.length > 0 && Date.now() < deadline; left = await survivors()) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (left.length === 0) return;
  stop(left.map((s) => s.pid), 'SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  stop((await survivors()).map((s) => s.pid), 'SIGKILL');
  const lines = left.map((s) => {
    const origin = origins.get(s.id)!;
    return `  pid ${s.pid}: ${s.command}\n    started at ${origin.site}\n    during (or after) test "${origin.test}"`;
  });
  const error = new Error(`${left.length} process(es) started by the tests were still running at the end (now killed):\n${lines.join('\n')}`);
  // Mocha prints the stack: this hook's own frames would only hide the list.
  error.stack = `Error: ${error.message}`;
  throw error;
}
