/**
 * Request-level harness for transit: a real transit backend over memory storage, driven through
 * the framework exactly as the host drives it (prepare → execute), without HTTP or tokens.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { pino } from 'pino';
import { MemoryStorage } from '../../../storage/memory.js';
import { StorageView } from '../../../storage/view.js';
import { createPluginContext } from '../../../core/plugins/context.js';
import { pluginServicesContainer } from '../../../core/plugins/services.js';
import type { Backend } from '../../../core/framework/backend.js';
import { JsonText } from '../../../core/framework/json-text.js';
import type { LogicalResponse, Operation } from '../../../core/framework/request.js';
import { httpStatusOf, publicMessageOf } from '../../../core/errors.js';
import { defaultMountConfig, type MountEntry } from '../../../core/mounts/mount-entry.js';
import type { Clock } from '../../../core/clock.js';
import { WasmCrypto } from '../../../wasm/index.js';
import { createTransitBackend } from '../../../plugins/transit/backend.js';
import type { Storage } from '../../../storage/storage.js';
import { sendDirect } from '../../helpers/backend.js';

let wasm: Promise<WasmCrypto> | undefined;

/** One WASM instance for all tests in the process. */
export function sharedWasm(): Promise<WasmCrypto> {
  wasm ??= WasmCrypto.load({ warmUp: false });
  return wasm;
}

export interface HarnessResult {
  /** The HTTP status the host would answer with (200, 204, 404 for a missing read, 4xx/5xx for errors). */
  readonly status: number;
  readonly data: any;
  readonly warnings: string[];
  /** The error message for an error status. */
  readonly error?: string;
  readonly response: LogicalResponse | null;
}

export class TransitHarness {
  private constructor(
    public backend: Backend,
    readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  static async create(options: { storage?: Storage; clock?: Clock } = {}): Promise<TransitHarness> {
    const storage = options.storage ?? new StorageView(new MemoryStorage(), 'logical/test/');
    const clock = options.clock ?? { now: () => new Date() };
    return new TransitHarness(await buildBackend(storage, clock), storage, clock);
  }

  /** Builds a fresh backend over the same storage (what a mount reload does). */
  async reload(): Promise<void> {
    await this.backend.cleanup?.();
    this.backend = await buildBackend(this.storage, this.clock);
  }

  /** `update` is what POST/PUT send; the existence check may turn it into `create`. */
  async request(operation: Operation, path: string, data: Record<string, unknown> = {}): Promise<HarnessResult> {
    try {
      const { response } = await sendDirect(this.backend, {
        id: randomUUID(),
        operation,
        path,
        data,
        storage: this.storage,
        mount: { path: 'transit/', type: 'transit', accessor: 'transit_test', uuid: 'test' },
      });
      if (response?.raw) return { status: response.raw.status, data: response.raw.body, warnings: [], response };
      const empty = !response || (!response.data && !response.warnings);
      const status = empty ? (operation === 'read' || operation === 'list' ? 404 : 204) : (response?.status ?? 200);
      return { status, data: response?.data ? asClientReads(response.data) : null, warnings: response?.warnings ?? [], response };
    } catch (err) {
      return { status: httpStatusOf(err), data: null, warnings: [], error: publicMessageOf(err), response: null };
    }
  }

  write(path: string, data: Record<string, unknown> = {}) {
    return this.request('update', path, data);
  }
  read(path: string, data: Record<string, unknown> = {}) {
    return this.request('read', path, data);
  }
}

/**
 * The data as a client reads it: a member written as JSON text (batch_results) is parsed from that
 * text, after checking that it says what its plain value (what audit and wrapping read) says.
 */
function asClientReads(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!(value instanceof JsonText)) {
      out[key] = value;
      continue;
    }
    const sent = JSON.parse(value.text) as unknown;
    if (!isDeepStrictEqual(sent, JSON.parse(JSON.stringify(value)))) throw new Error(`${key}: the JSON text and the plain value differ`);
    out[key] = sent;
  }
  return out;
}

async function buildBackend(storage: Storage, clock: Clock): Promise<Backend> {
  const mount: MountEntry = {
    table: 'secret',
    path: 'transit/',
    type: 'transit',
    description: '',
    uuid: 'test',
    accessor: 'transit_test',
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
    options: null,
    config: defaultMountConfig(),
    plugin_version: '0.1.0',
  };
  const { context } = createPluginContext({
    services: pluginServicesContainer({ WasmCrypto: await sharedWasm() }),
    mount,
    storage,
    logger: pino({ level: 'silent' }),
    clock,
    system: { defaultLeaseTtl: () => 3600, maxLeaseTtl: () => 3600 },
    config: {},
  });
  return createTransitBackend(context);
}
