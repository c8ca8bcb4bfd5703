/**
 * Sizes V8's pool of helper threads to the machine's cores (docs/deployment.md, "Memory").
 *
 * Node gives V8 a pool of 4 background threads whatever the machine
 * (https://nodejs.org/api/cli.html#--v8-pool-sizenum). V8 runs its concurrent marking and the
 * parallel parts of each collection on them, and in a collection's pause the event loop waits for
 * every helper to finish its share. On a machine with fewer cores than helpers, a helper that the
 * scheduler has put aside holds that pause up, and under a load of very large requests those
 * waits were the longest pauses left (bench/README.md, "V8's thread pool, sized to the cores").
 *
 * The pool's size is fixed when Node starts, and nothing inside a running process can change it.
 * So `keywarden server` (bin/keywarden.js, before it loads the CLI or opens anything) starts its own
 * program again in the same process (`process.execve`: same PID, same standard streams, same
 * environment) with `--v8-pool-size` set to the cores it may use, when that is fewer than Node's 4.
 * Workers are forked with the primary's Node flags, so they inherit it. It stands aside when the
 * operator chose a size (`--v8-pool-size` on Node's command line or in `NODE_OPTIONS`), when this
 * process has an IPC channel (a cluster worker, or a program that forked the server: execve would
 * close the channel), and where Node has no execve (Windows) or the permission model forbids it.
 */
import os from 'node:os';

/** Node's own pool size (`--v8-pool-size`'s default). */
export const NODE_POOL_SIZE = 4;

export interface HelperPoolFacts {
  /** Node's flags: its arguments, then NODE_OPTIONS split on spaces. */
  readonly nodeFlags: readonly string[];
  /** The cores this process may use (`os.availableParallelism()`). */
  readonly parallelism: number;
}

/** The flag to start Node with, or undefined when Node's pool is already right or was chosen. */
export function helperPoolFlag(facts: HelperPoolFacts): string | undefined {
  if (facts.nodeFlags.some((flag) => /^--v8[-_]pool[-_]size\b/.test(flag))) return undefined;
  const size = Math.max(1, Math.min(NODE_POOL_SIZE, Math.floor(facts.parallelism)));
  return size < NODE_POOL_SIZE ? `--v8-pool-size=${size}` : undefined;
}

/**
 * Replaces this process with the same program under a pool sized to the cores, when
 * `helperPoolFlag` asks for one and the process can be replaced; returns only when it is not.
 * Call it first thing, before any file, socket or timer is opened.
 */
export function restartWithSizedHelperPool(): void {
  const flag = helperPoolFlag({
    nodeFlags: [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)],
    parallelism: os.availableParallelism(),
  });
  if (flag === undefined || process.channel !== undefined || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, flag, ...process.execArgv, ...process.argv.slice(1)], process.env);
  } catch {
    // Refused (the permission model without --allow-child-process, a seccomp filter): the server
    // runs with Node's pool, as it would have without this.
  }
}
