/**
 * The V8 flags `keywarden server` starts Node with (docs/deployment.md, "Memory").
 *
 * Two of V8's settings matter under a load of very large requests, and neither can be changed
 * inside a running process:
 *
 * - **The helper pool.** Node gives V8 a pool of 4 background threads whatever the machine
 *   (https://nodejs.org/api/cli.html#--v8-pool-sizenum). V8 runs its concurrent marking and the
 *   parallel parts of each collection on them, and in a collection's pause the event loop waits for
 *   every helper to finish its share. On a machine with fewer cores than helpers, a helper that the
 *   scheduler has put aside holds that pause up (bench/README.md, "V8's thread pool, sized to the
 *   cores"). The pool is sized to the cores the process may use, when that is fewer than 4.
 * - **Buffers in the heap's limit.** By default V8 starts a full collection each time the memory
 *   held by ArrayBuffers (every Node Buffer) has grown by 64 MB since the last one, whatever the
 *   size of the heap: a 30 MB encrypt, which holds its body, its plaintext and its ciphertext as
 *   buffers, started about one each. `--external-memory-accounted-in-global-limit` counts that
 *   memory in the heap's own growing limit instead, so collections follow how much the process
 *   keeps rather than how fast it allocates (bench/README.md, "Buffers counted in the heap's
 *   limit"). V8 later made this its default and removed the flag
 *   (https://issues.chromium.org/issues/361124432), so it is only given to the V8 it was measured
 *   on (Node 24's, V8 13): another V8 either does it already or was not measured, and an unknown
 *   flag would stop Node from starting. Node refuses the flag in NODE_OPTIONS, so an operator who
 *   wants V8's older behaviour starts Node with `--no-external-memory-accounted-in-global-limit`.
 *
 * So `keywarden server` (bin/keywarden.js, before it loads the CLI or opens anything) starts its own
 * program again in the same process (`process.execve`: same PID, same standard streams, same
 * environment) with the flags it lacks. Workers are forked with the primary's Node flags, so they
 * inherit them. Each flag stands aside when the operator gave it, either way, on Node's command line
 * or in NODE_OPTIONS. Nothing is replaced when the process has an IPC channel (a cluster worker, or
 * a program that forked the server: execve would close the channel), and where Node has no execve
 * (Windows) or the permission model forbids it.
 */
import os from 'node:os';

/** Node's own pool size (`--v8-pool-size`'s default). */
export const NODE_POOL_SIZE = 4;

/** The flag that counts ArrayBuffers' memory in V8's heap limit. */
export const EXTERNAL_MEMORY_FLAG = '--external-memory-accounted-in-global-limit';
/** The V8 major version that flag was measured on (Node 24's). */
export const EXTERNAL_MEMORY_V8 = 13;

export interface StartFacts {
  /** Node's flags: its arguments, then NODE_OPTIONS split on spaces. */
  readonly nodeFlags: readonly string[];
  /** The cores this process may use (`os.availableParallelism()`). */
  readonly parallelism: number;
  /** `process.versions.v8`. */
  readonly v8Version: string;
}

/** The flags to start Node with; empty when Node already runs as it should or the operator chose. */
export function startFlags(facts: StartFacts): string[] {
  return [helperPoolFlag(facts), externalMemoryFlag(facts)].filter((flag): flag is string => flag !== undefined);
}

/** `--v8-pool-size` sized to the cores, or undefined when Node's pool is already right or was chosen. */
export function helperPoolFlag(facts: StartFacts): string | undefined {
  if (facts.nodeFlags.some((flag) => /^--v8[-_]pool[-_]size\b/.test(flag))) return undefined;
  const size = Math.max(1, Math.min(NODE_POOL_SIZE, Math.floor(facts.parallelism)));
  return size < NODE_POOL_SIZE ? `--v8-pool-size=${size}` : undefined;
}

/** The external-memory flag, or undefined on another V8 or when the operator gave it either way. */
export function externalMemoryFlag(facts: StartFacts): string | undefined {
  if (Number.parseInt(facts.v8Version, 10) !== EXTERNAL_MEMORY_V8) return undefined;
  if (facts.nodeFlags.some((flag) => /^--(no[-_])?external[-_]memory[-_]accounted[-_]in[-_]global[-_]limit\b/.test(flag))) return undefined;
  return EXTERNAL_MEMORY_FLAG;
}

/**
 * Replaces this process with the same program under the flags `startFlags` asks for, when it asks
 * for any and the process can be replaced; returns only when it is not.
 * Call it first thing, before any file, socket or timer is opened.
 */
export function restartWithStartFlags(): void {
  const flags = startFlags({
    nodeFlags: [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)],
    parallelism: os.availableParallelism(),
    v8Version: process.versions.v8,
  });
  if (flags.length === 0 || process.channel !== undefined || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
  } catch {
    // Refused (the permission model without --allow-child-process, a seccomp filter): the server
    // runs with Node's defaults, as it would have without this.
  }
}
