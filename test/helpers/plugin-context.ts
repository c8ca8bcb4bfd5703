/**
 * A plugin's backend at the request level, without a server: a context on in-memory storage and
 * a way to send it one request, for tests that construct a backend with options a server does
 * not pass (a short timeout, a directory of fixture files).
 */
import { pino } from 'pino';
import { MemoryStorage } from '../../storage/memory.js';
import { createPluginContext } from '../../core/plugins/context.js';
import { pluginServicesContainer } from '../../core/plugins/services.js';
import { defaultMountConfig } from '../../core/mounts/mount-entry.js';
import type { Backend, LogicalResponse, Operation, PluginContext } from '../../sdk/index.js';
import { sendDirect } from './backend.js';
import { ManualClock } from './server.js';

export function testPluginContext(type: string, kind: 'secret' | 'auth' = 'auth'): PluginContext {
  return createPluginContext({
    services: pluginServicesContainer({}),
    mount: {
      table: kind === 'auth' ? 'auth' : 'secret',
      path: kind === 'auth' ? `auth/${type}/` : `${type}/`,
      type,
      description: '',
      uuid: 'test',
      accessor: `${type}_test`,
      local: false,
      seal_wrap: false,
      external_entropy_access: false,
      options: null,
      config: defaultMountConfig(),
      plugin_version: '',
    },
    storage: new MemoryStorage(),
    logger: pino({ level: 'silent' }),
    clock: new ManualClock(),
    system: { defaultLeaseTtl: () => 3600, maxLeaseTtl: () => 7200 },
    config: {},
  }).context;
}

/** Sends `backend` one request from 127.0.0.1 and answers its response (or throws its error). */
export async function sendTo(backend: Backend, context: PluginContext, path: string, data: Record<string, unknown>, operation: Operation = 'update'): Promise<LogicalResponse | null> {
  const mount = { path: context.mount.path, type: context.mount.type, accessor: context.mount.accessor, uuid: context.mount.uuid };
  return (await sendDirect(backend, { id: 'request', operation, path, data, storage: context.storage, mount })).response;
}
