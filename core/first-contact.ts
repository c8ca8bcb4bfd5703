/**
 * What a server says once it listens, for the operator reading its log: whether it is
 * uninitialized, sealed or ready, the command that takes it a step further (with the address the
 * CLI should use) or, with an auto seal, that it unseals itself, and where its web UI is. One JSON
 * log line each, like every other line.
 */
import type { Logger } from 'pino';
import type { SealManager } from './seal/seal-manager.js';

export async function logFirstSteps(seal: SealManager, address: string, uiOn: boolean, logger: Logger): Promise<void> {
  if (uiOn) logger.info({ ui: `${address}/ui/` }, `web UI at ${address}/ui/`);
  let status;
  try {
    status = await seal.status();
  } catch (err) {
    // Storage that cannot be read now (a database down) is reported by the requests that need it.
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'the seal state could not be read yet');
    return;
  }
  const cli = `KEYWARDEN_ADDR=${address}`;
  // An auto seal holds the root key: there are no unseal key shares to create or to type.
  const autoSeal = status.type === 'shamir' ? undefined : status.type;
  if (!status.initialized) {
    logger.info(
      { state: 'uninitialized', next: 'keywarden operator init' },
      autoSeal
        ? `Keywarden is not initialized: run keywarden operator init (with ${cli}) to create its root token; its ${autoSeal} seal wraps the root key, and the node unseals itself`
        : `Keywarden is not initialized: run keywarden operator init (with ${cli}) to create its unseal key shares and root token`,
    );
  } else if (status.sealed && autoSeal) {
    logger.info(
      { state: 'sealed', seal: autoSeal },
      `Keywarden is sealed and unseals itself through its ${autoSeal} seal, retrying while the seal cannot be reached: each failed attempt is logged, and sys/seal-status at ${address} shows why as seal_error`,
    );
  } else if (status.sealed) {
    logger.info(
      { state: 'sealed', next: 'keywarden operator unseal', threshold: status.t },
      `Keywarden is sealed: run keywarden operator unseal (with ${cli}) once for each of ${status.t} unseal key shares`,
    );
  } else {
    logger.info({ state: 'unsealed' }, 'Keywarden is unsealed and serving');
  }
}
