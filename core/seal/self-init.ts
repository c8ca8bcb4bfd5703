/**
 * Declarative self-initialization (OpenBao 2.4, https://openbao.org/docs/configuration/self-init/):
 * on the first start of an auto-sealed store, the node initializes itself and runs the
 * configuration's `initialize` requests, in order, through the normal request pipeline (audited,
 * authorized like any client's) with a root token that exists only for them and is revoked at the
 * end. Nobody is handed a root token or shares: recovery shares are created later, by an
 * authenticated sys/rekey-recovery-key/init.
 *
 * Once: the requests run only on the node whose init succeeded, right after it; init runs under
 * the store's cluster lock (seal-manager.ts), so with PostgreSQL HA the other nodes find the store
 * initialized and skip them, as does every later start. A request that fails stops the rest (unless
 * it allows failure) with a log line naming it; the store stays initialized and consistent, and
 * the operator finishes by hand with recovery shares and root generation (docs/deployment.md).
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { AlreadyInitializedError, errorMessage } from '../errors.js';
import type { SelfInitBlock, SelfInitRequest, SelfInitOperation } from '../config/settings.js';
import type { HostRequest, HostResponse } from '../pipeline/types.js';

export interface SelfInitLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface SelfInitDeps {
  /** Whether the store is initialized; and its init with an auto seal, without recovery shares. */
  readonly seal: {
    isInitialized(): Promise<boolean>;
    initializeAuto(recoveryShares: number, recoveryThreshold: number): Promise<{ readonly rootToken: string }>;
    status(): Promise<{ readonly sealed: boolean }>;
    /** Auto-unseal attempts, in the background. */
    startAutoUnseal(): void;
  };
  /** The request pipeline every client's request goes through. */
  handle(request: HostRequest): Promise<HostResponse>;
  /**
   * With HA: whether some node is active. Right after init the cluster elects one, and until then
   * every request answers 503.
   */
  readonly activeNodeKnown?: () => Promise<boolean>;
  readonly log: SelfInitLog;
  readonly env?: NodeJS.ProcessEnv;
}

/** How a run ended. */
export type SelfInitOutcome = 'skipped' | 'completed' | 'stopped';

const METHODS: Readonly<Record<SelfInitOperation, string>> = {
  create: 'POST',
  update: 'PUT',
  read: 'GET',
  list: 'LIST',
  delete: 'DELETE',
  patch: 'PATCH',
};

/** Where the pipeline sees the requests come from (audit entries show it). */
const REMOTE_ADDRESS = 'self-init';

/**
 * Initializes the store and runs `blocks`' requests, unless the store is initialized already.
 * @throws what init throws (an unreachable seal) other than AlreadyInitializedError.
 */
export async function selfInitialize(blocks: readonly SelfInitBlock[], deps: SelfInitDeps): Promise<SelfInitOutcome> {
  const { log } = deps;
  if (await deps.seal.isInitialized()) {
    log.info({}, 'self-init: the store is initialized already; the initialize stanzas do not run again');
    return 'skipped';
  }
  let rootToken: string;
  try {
    ({ rootToken } = await deps.seal.initializeAuto(0, 0));
  } catch (err) {
    if (!(err instanceof AlreadyInitializedError)) throw err;
    log.info({}, 'self-init: another node initialized the store first; the initialize stanzas run there');
    // This node's attempt at start found the store uninitialized: it unseals now that it is.
    deps.seal.startAutoUnseal();
    return 'skipped';
  }
  log.info({ stanzas: blocks.length }, 'self-init: the store is initialized; running the initialize stanzas');
  if ((await deps.seal.status()).sealed) {
    log.error({}, 'self-init: the node did not unseal after init, so no initialize request ran; once it unseals, finish by hand (docs/deployment.md)');
    return 'stopped';
  }
  try {
    if (deps.activeNodeKnown && !(await waitFor(deps.activeNodeKnown))) {
      log.warn({}, 'self-init: no node became active yet; running the requests all the same');
    }
    for (const block of blocks) {
      for (const request of block.requests) {
        const failure = await run(request, rootToken, deps);
        if (failure === undefined) {
          log.info({ initialize: block.name, request: request.name, path: request.path }, 'self-init: request done');
          continue;
        }
        const fields = { initialize: block.name, request: request.name, operation: request.operation, path: request.path, declared_at: request.declaredAt, error: failure };
        if (request.allowFailure) {
          log.warn(fields, 'self-init: request failed; it allows failure, so the next one runs');
          continue;
        }
        log.error(fields, 'self-init: request failed; the remaining requests do not run. The store is initialized: finish by hand (docs/deployment.md)');
        return 'stopped';
      }
    }
    log.info({}, 'self-init: every initialize request ran');
    return 'completed';
  } finally {
    await revoke(rootToken, deps);
  }
}

/** How long the run waits for an active node (HA). An election takes a few lock polls. */
const ACTIVE_NODE_WAIT_MS = 60_000;
const ACTIVE_NODE_POLL_MS = 100;

async function waitFor(done: () => Promise<boolean>): Promise<boolean> {
  for (let waited = 0; waited < ACTIVE_NODE_WAIT_MS; waited += ACTIVE_NODE_POLL_MS) {
    if (await done()) return true;
    await delay(ACTIVE_NODE_POLL_MS);
  }
  return done();
}

/**
 * Runs a request through the pipeline. With HA, a 503 while the cluster settles (the node that
 * won the election still promoting itself refuses what is forwarded to it, and nothing ran) is
 * asked again, as a client would, until ACTIVE_NODE_WAIT_MS has passed.
 */
async function handleThroughElection(deps: SelfInitDeps, request: HostRequest): Promise<HostResponse> {
  const deadline = Date.now() + ACTIVE_NODE_WAIT_MS;
  let pause = ACTIVE_NODE_POLL_MS;
  for (;;) {
    const response = await deps.handle(request);
    if (response.status !== 503 || !deps.activeNodeKnown || Date.now() + pause > deadline) return response;
    await delay(pause);
    pause = Math.min(pause * 2, 1_000);
  }
}

/** Runs one request; answers undefined on success, else why it failed. */
async function run(request: SelfInitRequest, token: string, deps: SelfInitDeps): Promise<string | undefined> {
  let data: unknown;
  try {
    data = request.data === undefined ? undefined : await resolve(request.data, deps.env ?? process.env);
  } catch (err) {
    return errorMessage(err);
  }
  const reads = request.operation === 'read' || request.operation === 'list';
  const response = await handleThroughElection(deps, {
    method: METHODS[request.operation],
    path: request.path,
    // Reads and lists take their data as query parameters, as a client's would.
    query: reads && data ? stringValues(data as Record<string, unknown>) : {},
    body: reads ? undefined : data,
    headers: {
      'x-vault-token': token,
      ...(request.operation === 'patch' ? { 'content-type': 'application/merge-patch+json' } : {}),
    },
    remoteAddress: REMOTE_ADDRESS,
  });
  if (response.status < 400) return undefined;
  const errors = (response.body as { errors?: unknown } | undefined)?.errors;
  return `${response.status}: ${Array.isArray(errors) ? errors.join('; ') : 'no error message'}`;
}

/** Revokes the run's root token through the pipeline (audited like the requests). */
async function revoke(token: string, deps: SelfInitDeps): Promise<void> {
  try {
    const response = await handleThroughElection(deps, { method: 'PUT', path: 'auth/token/revoke-self', query: {}, body: undefined, headers: { 'x-vault-token': token }, remoteAddress: REMOTE_ADDRESS });
    if (response.status >= 400) throw new Error(`revoke-self answered ${response.status}`);
    deps.log.info({}, 'self-init: its root token is revoked');
  } catch (err) {
    deps.log.error({ err: errorMessage(err) }, 'self-init: its root token could not be revoked; revoke every root token you did not create (auth/token/accessors)');
  }
}

/**
 * `env://NAME` and `file://PATH` strings, anywhere in `value`, replaced by what they refer to:
 * the variable's value (which must be set) and the file's contents as they are.
 */
async function resolve(value: unknown, env: NodeJS.ProcessEnv): Promise<unknown> {
  if (typeof value === 'string') {
    if (value.startsWith('env://')) {
      const name = value.slice('env://'.length);
      const found = env[name];
      if (found === undefined) throw new Error(`env://${name}: the environment variable is not set`);
      return found;
    }
    if (value.startsWith('file://')) {
      const file = value.slice('file://'.length);
      try {
        return await readFile(file, 'utf8');
      } catch (err) {
        throw new Error(`file://${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)})`);
      }
    }
    return value;
  }
  if (Array.isArray(value)) return Promise.all(value.map((item) => resolve(item, env)));
  if (value && typeof value === 'object') {
    const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await resolve(v, env)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}

function stringValues(data: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}
