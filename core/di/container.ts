/**
 * A thin wrapper over tsyringe: a root container per server for the host's services, and the
 * containers of plugins (core/plugins/services.ts), disposed explicitly when a mount goes away or
 * is reloaded. Registration and resolution go through typed tokens (./tokens.ts).
 */
import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import type { Token } from './tokens.js';

export type { DependencyContainer };

/** A fresh root container (a new one per server, so tests can run several servers in one process). */
export function createRootContainer(): DependencyContainer {
  return rootContainer.createChildContainer();
}

export function registerValue<T>(container: DependencyContainer, token: Token<T>, value: T): void {
  container.register<T>(token, { useValue: value });
}

export function resolve<T>(container: DependencyContainer, token: Token<T>): T {
  return container.resolve<T>(token);
}
