/**
 * Every injection token, in one file. A token carries the type of the service it names, so
 * resolving it needs no cast. The host's own services (below the barrier, the barrier) live in
 * the host's container; the services a plugin may have are another list
 * (core/plugins/services.ts), registered in a container of their own that holds nothing else.
 */
import type { Logger } from 'pino';
import type { Barrier } from '../../storage/barrier.js';
import type { PhysicalStorage, Storage } from '../../storage/storage.js';
import type { Clock } from '../clock.js';

declare const serviceType: unique symbol;

/** An injection token for a service of type `T` (a symbol to tsyringe). */
export type Token<T> = symbol & { readonly [serviceType]?: T };

/** The service type a token names. */
export type ServiceOf<K> = K extends Token<infer T> ? T : never;

export function token<T>(name: string): Token<T> {
  return Symbol(name) as Token<T>;
}

/** The host's services, in the host's container; no plugin's container reaches them. */
export const TOKENS = {
  /** The barrier-backed logical storage. */
  Storage: token<Storage>('Storage'),
  /** The physical store under the barrier. */
  PhysicalStorage: token<PhysicalStorage>('PhysicalStorage'),
  /** The encrypting barrier. */
  Barrier: token<Barrier>('Barrier'),
  /** The server's clock (tests replace it to move time). */
  Clock: token<Clock>('Clock'),
  /** The server's logger. */
  Logger: token<Logger>('Logger'),
} as const;
