/**
 * What a server says once it listens, for the operator reading its log: whether it is
 * uninitialized, sealed or ready, the command that takes it a step further (with the address the
 * CLI should use), and where its web UI is. One JSON log line each, like every other line.
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
  if (!status.initialized) {
    logger.info(
      { state: 'uninitialized', next: 'keywarden operator init' },
      `Keywarden is not initialized: run keywarden operator init (with ${cli}) to create its unseal key shares and root token`,
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
