/**
 * A thin wrapper over tsyringe: the root container for global services and one child container per
 * mount, disposed explicitly when the mount goes away or is reloaded.
 */
import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';

export type { DependencyContainer };

/** A fresh root container (a new one per server, so tests can run several servers in one process). */
export function createRootContainer(): DependencyContainer {
  return rootContainer.createChildContainer();
}

export function registerValue<T>(container: DependencyContainer, token: symbol, value: T): void {
  container.register<T>(token, { useValue: value });
}

export function resolve<T>(container: DependencyContainer, token: symbol): T {
  return container.resolve<T>(token);
}
