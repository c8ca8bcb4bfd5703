/**
 * How provider failures reach the client: a refusal by the provider or a configuration that
 * cannot work is the caller's to fix (400); a provider that is down, slow or answers garbage is
 * not (502). Either way the message says what was attempted and what went wrong.
 */
import { BadRequestError, UpstreamError } from '../../sdk/index.js';
import { ProviderConfigError, ProviderRequestError, ProviderUnavailableError } from './provider/types.js';

/** `<context>: <provider error>` as the error class that fits; anything else is rethrown as is (a bug: 500). */
export function providerFailure(context: string, err: unknown): Error {
  if (err instanceof ProviderUnavailableError) return new UpstreamError(`${context}: ${err.message}`);
  if (err instanceof ProviderRequestError || err instanceof ProviderConfigError) return new BadRequestError(`${context}: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

/** Whether an error came from the provider seam (and so has a message fit for the client). */
export function isProviderError(err: unknown): boolean {
  return err instanceof ProviderUnavailableError || err instanceof ProviderRequestError || err instanceof ProviderConfigError;
}
