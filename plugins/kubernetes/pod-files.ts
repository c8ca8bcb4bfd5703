/**
 * The service account files Kubernetes mounts into a pod (its token and the cluster's CA), which
 * this method uses when the configuration sets no token_reviewer_jwt or kubernetes_ca_cert and
 * disable_local_ca_jwt is off, as Vault does when it runs in the cluster. The token is read again
 * every TOKEN_REREAD_MS (projected tokens are rotated by the kubelet), the CA every CA_REREAD_MS.
 * A file that cannot be read (not in a pod; an isolated plugin process, which may read no file)
 * counts as absent.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Clock, Logger } from '../../sdk/index.js';

export const POD_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
export const TOKEN_REREAD_MS = 60_000;
export const CA_REREAD_MS = 3600_000;

class CachedFile {
  private read: { readonly text: string; readonly at: number } | undefined;

  constructor(
    private readonly file: string,
    private readonly rereadMs: number,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async text(): Promise<string> {
    const now = this.clock.now().getTime();
    if (this.read && now - this.read.at < this.rereadMs) return this.read.text;
    let text = '';
    try {
      text = (await readFile(this.file, 'utf8')).trim();
    } catch (err) {
      this.logger.debug({ file: this.file, err: (err as Error).message }, 'kubernetes: no pod service account file');
    }
    this.read = { text, at: now };
    return text;
  }
}

export class PodServiceAccount {
  private readonly tokenFile: CachedFile;
  private readonly caFile: CachedFile;

  constructor(dir: string, clock: Clock, logger: Logger) {
    this.tokenFile = new CachedFile(path.join(dir, 'token'), TOKEN_REREAD_MS, clock, logger);
    this.caFile = new CachedFile(path.join(dir, 'ca.crt'), CA_REREAD_MS, clock, logger);
  }

  /** The pod's service account token; '' outside a pod. */
  token(): Promise<string> {
    return this.tokenFile.text();
  }

  /** The cluster's CA certificate (PEM); '' outside a pod. */
  caCert(): Promise<string> {
    return this.caFile.text();
  }
}
