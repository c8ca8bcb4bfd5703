/**
 * Known plugins by name. Every manifest is checked when registered and every backend a factory
 * builds is checked before it is mounted, so a broken plugin fails its own mount, loudly, and
 * never the server.
 */
import { BadRequestError, createError, errorMessage } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { PluginContext, PluginKind, PluginManifest } from './plugin.js';

/** A plugin that cannot be used; the message says which and why. */
export const PluginError = createError('PluginError', 'KW_PLUGIN_UNUSABLE', 400, { parent: BadRequestError });
export type PluginError = InstanceType<typeof PluginError>;

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;
const RESERVED = new Set(['system', 'token', 'cubbyhole', 'identity', 'plugin']);

/** Checks a manifest's shape; returns it typed or throws PluginError naming the problem. */
export function checkManifest(candidate: unknown, origin: string): PluginManifest {
  const fail = (why: string): never => {
    throw new PluginError(`plugin from ${origin} is unusable: ${why}`);
  };
  if (candidate === null || typeof candidate !== 'object') return fail('its manifest is not an object');
  const m = candidate as Record<string, unknown>;
  if (typeof m.name !== 'string' || !NAME.test(m.name)) return fail('"name" must be lower-case letters, digits and "-"');
  if (RESERVED.has(m.name)) return fail(`"name" ${JSON.stringify(m.name)} is reserved`);
  if (m.kind !== 'secret' && m.kind !== 'auth') return fail('"kind" must be "secret" or "auth"');
  if (typeof m.version !== 'string' || !SEMVER.test(m.version)) return fail('"version" must be a semantic version such as 1.0.0');
  if (typeof m.description !== 'string') return fail('"description" must be a string');
  if (typeof m.factory !== 'function') return fail('"factory" must be a function');
  return candidate as PluginManifest;
}

/** Checks that a factory's result is a usable backend. */
export function checkBackend(candidate: unknown, manifest: PluginManifest): Backend {
  const methods = ['prepare', 'execute', 'isUnauthenticated', 'help', 'describePaths'] as const;
  if (candidate === null || typeof candidate !== 'object') {
    throw new PluginError(`plugin "${manifest.name}" is unusable: its factory did not return a backend`);
  }
  for (const method of methods) {
    if (typeof (candidate as Record<string, unknown>)[method] !== 'function') {
      throw new PluginError(`plugin "${manifest.name}" is unusable: its backend has no "${method}" method`);
    }
  }
  return candidate as Backend;
}

export class PluginRegistry {
  private readonly plugins = new Map<string, PluginManifest>();

  register(candidate: unknown, origin = 'built-in'): PluginManifest {
    const manifest = checkManifest(candidate, origin);
    if (this.plugins.has(manifest.name)) throw new PluginError(`plugin "${manifest.name}" is already registered`);
    this.plugins.set(manifest.name, manifest);
    return manifest;
  }

  get(name: string, kind: PluginKind): PluginManifest {
    const manifest = this.plugins.get(name);
    if (!manifest || manifest.kind !== kind) {
      throw new BadRequestError(
        kind === 'secret' ? `unknown secrets engine type: ${name}` : `unknown auth method type: ${name}`,
      );
    }
    return manifest;
  }

  has(name: string): boolean {
    return this.plugins.has(name);
  }

  list(): PluginManifest[] {
    return [...this.plugins.values()];
  }

  /** Runs a manifest's factory and checks the result; a throwing factory becomes a PluginError. */
  async build(manifest: PluginManifest, context: PluginContext): Promise<Backend> {
    let backend: unknown;
    try {
      backend = await manifest.factory(context);
    } catch (err) {
      const why = errorMessage(err);
      throw new PluginError(`plugin "${manifest.name}" failed to start: ${why}`);
    }
    const checked = checkBackend(backend, manifest);
    if (checked.initialize) {
      try {
        await checked.initialize();
      } catch (err) {
        const why = errorMessage(err);
        throw new PluginError(`plugin "${manifest.name}" failed to initialize: ${why}`);
      }
    }
    return checked;
  }
}
