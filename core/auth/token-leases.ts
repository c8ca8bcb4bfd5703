/**
 * Tokens as Vault's leases (docs/leases.md). Every service token that expires is a lease, named as
 * Vault names a token's lease: the path that issued it and the token's salted hash —
 * `auth/userpass/login/alice/<hash>` for a login, `auth/token/create/<hash>` for a child token. A
 * token that never expires (the root token) is not a lease, as in Vault. The leases of secrets
 * engines' secrets are core/leases/'s.
 */
import type { TokenEntry, TokenStore } from './token-store.js';

export interface TokenLease {
  readonly id: string;
  readonly hash: string;
  readonly entry: TokenEntry;
}

export class TokenLeases {
  constructor(private readonly tokens: TokenStore) {}

  /** The lease id of a stored token; undefined when it is not a lease (it never expires). */
  static idOf(hash: string, entry: TokenEntry): string | undefined {
    return entry.expireTime === 0 || entry.type !== 'service' ? undefined : `${entry.path}/${hash}`;
  }

  /** The live lease with this id, or undefined. */
  async find(leaseId: string): Promise<TokenLease | undefined> {
    const slash = leaseId.lastIndexOf('/');
    if (slash <= 0) return undefined;
    const found = await this.tokens.lookupHash(leaseId.slice(slash + 1));
    if (!found || TokenLeases.idOf(found.hash, found.entry) !== leaseId) return undefined;
    return { id: leaseId, ...found };
  }

  /** Every live lease whose id starts with `prefix`. */
  async under(prefix: string): Promise<TokenLease[]> {
    const now = this.tokens.now();
    const out: TokenLease[] = [];
    for await (const { hash, entry } of this.tokens.stored()) {
      const id = TokenLeases.idOf(hash, entry);
      if (id !== undefined && id.startsWith(prefix) && entry.expireTime > now) out.push({ id, hash, entry });
    }
    return out;
  }

  /**
   * The names one level below `prefix` (which ends in `/`, or is empty for the top): a lease's
   * last segment, or a folder with a trailing `/`, sorted, as Vault lists its lease store.
   */
  async list(prefix: string): Promise<string[]> {
    const names = new Set<string>();
    for (const lease of await this.under(prefix)) {
      const rest = lease.id.slice(prefix.length);
      const slash = rest.indexOf('/');
      names.add(slash === -1 ? rest : rest.slice(0, slash + 1));
    }
    return [...names].sort();
  }

  /** Revokes a lease: the token and every token created from it. */
  async revoke(lease: TokenLease): Promise<void> {
    await this.tokens.revokeTree(lease.hash);
  }

  /**
   * Revokes the lease `prefix` names exactly, or else every lease under it (a missing trailing
   * `/` is added, so `auth/userpass` never reaches `auth/userpass2/`), before it returns. Returns
   * how many were revoked.
   */
  async revokePrefix(prefix: string): Promise<number> {
    if (!prefix.endsWith('/')) {
      const exact = await this.find(prefix);
      if (exact) {
        await this.revoke(exact);
        return 1;
      }
      prefix += '/';
    }
    const leases = await this.under(prefix);
    for (const lease of leases) await this.revoke(lease);
    return leases.length;
  }
}
