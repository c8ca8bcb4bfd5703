/**
 * Response wrapping: a response is kept in the cubbyhole of a new single-use token (policy
 * `response-wrapping`, orphan, not renewable, TTL as asked), and the client gets only that token's
 * `wrap_info`. Unwrapping spends the token's one use — atomically, so two unwraps of one token never
 * both succeed — returns the response, and revokes the token, which destroys its cubbyhole.
 */
import { BadRequestError } from '../errors.js';
import { RESPONSE_WRAPPING_POLICY_NAME } from '../auth/policy/builtin.js';
import type { ResolvedToken, TokenEntry, TokenStore } from '../auth/token-store.js';
import { cubbyholePrefix } from '../cubbyhole/backend.js';
import { parseExact, stringifyExact } from '../framework/exact-json.js';
import type { Unsealed } from '../unsealed.js';

/** Vault's `wrap_info`. */
export interface WrapInfo {
  readonly token: string;
  readonly accessor: string;
  readonly ttl: number;
  readonly creation_time: string;
  readonly creation_path: string;
  readonly wrapped_accessor?: string;
}

/** The key a wrapped response is kept under in the wrapping token's cubbyhole, as in Vault. */
const RESPONSE_KEY = 'response';

const INVALID = 'wrapping token is not valid or does not exist';

export class ResponseWrapper {
  constructor(
    private readonly tokens: TokenStore,
    private readonly unsealed: Unsealed,
    /**
     * The system's max_lease_ttl in seconds: no wrapping token lives longer, as no other token
     * does, so a client cannot keep stored tokens around for ever ("87600000h").
     */
    private readonly maxTtl: number,
  ) {}

  /** Wraps a response body (Vault's JSON envelope) for `ttl` seconds, at most the system maximum (wrap_info says which). */
  async wrap(body: unknown, requestedTtl: number, creationPath: string, wrappedAccessor?: string): Promise<WrapInfo> {
    const ttl = Math.min(requestedTtl, this.maxTtl);
    const now = this.tokens.now();
    const { id, entry } = await this.tokens.create({
      parent: '',
      policies: [RESPONSE_WRAPPING_POLICY_NAME],
      path: creationPath,
      meta: null,
      displayName: 'response-wrapping',
      numUses: 1,
      creationTime: now,
      ttl,
      creationTtl: ttl,
      expireTime: now + ttl,
      explicitMaxTtl: 0,
      maxTtl: ttl,
      period: 0,
      renewable: false,
      type: 'service',
      boundCidrs: [],
      entityId: '',
      role: '',
      lastRenewalTime: 0,
    });
    const hash = await this.tokens.hashToken(id);
    await this.unsealed.cubbyholeStorage.put(cubbyholePrefix(hash) + RESPONSE_KEY, Buffer.from(JSON.stringify({ response: stringifyExact(body) }), 'utf8'));
    return {
      token: id,
      accessor: entry.accessor,
      ttl,
      creation_time: new Date(now * 1000).toISOString(),
      creation_path: creationPath,
      ...(wrappedAccessor ? { wrapped_accessor: wrappedAccessor } : {}),
    };
  }

  /**
   * Unwraps: spends the token's use (unless the pipeline already spent it, when the wrapping token
   * itself authenticated the request), revokes it and returns the wrapped response.
   */
  async unwrap(tokenId: string, alreadySpent: boolean): Promise<unknown> {
    const token = await this.claim(tokenId, alreadySpent);
    try {
      return await this.read(token.hash);
    } finally {
      await this.tokens.revokeTree(token.hash);
    }
  }

  /** What a wrapping token holds, without spending it. */
  async lookup(tokenId: string): Promise<{ creation_path: string; creation_time: string; creation_ttl: number }> {
    const token = await this.tokens.lookup(tokenId);
    if (!token || !isWrapping(token.entry) || token.entry.numUses < 1) throw new BadRequestError(INVALID);
    return { creation_path: token.entry.path, creation_time: new Date(token.entry.creationTime * 1000).toISOString(), creation_ttl: token.entry.creationTtl };
  }

  /** The same response under a new wrapping token with the same TTL and creation path; the old one is spent. */
  async rewrap(tokenId: string): Promise<WrapInfo> {
    const token = await this.claim(tokenId, false);
    try {
      return await this.wrap(await this.read(token.hash), token.entry.creationTtl, token.entry.path);
    } finally {
      await this.tokens.revokeTree(token.hash);
    }
  }

  private async claim(tokenId: string, alreadySpent: boolean): Promise<ResolvedToken> {
    const token = await this.tokens.lookup(tokenId);
    if (!token || !isWrapping(token.entry)) throw new BadRequestError(INVALID);
    if (!alreadySpent && !(await this.tokens.use(token)).allowed) throw new BadRequestError(INVALID);
    return token;
  }

  private async read(hash: string): Promise<unknown> {
    const raw = await this.unsealed.cubbyholeStorage.get(cubbyholePrefix(hash) + RESPONSE_KEY);
    if (!raw) throw new BadRequestError(INVALID);
    const stored = JSON.parse(Buffer.from(raw).toString('utf8')) as { response: string };
    // A kv answer's numbers keep every digit through wrapping (core/framework/exact-json.ts).
    return parseExact(stored.response);
  }
}

/** Only wrapping tokens carry the response-wrapping policy (no other token may be given it). */
export function isWrapping(entry: TokenEntry): boolean {
  return entry.policies.length === 1 && entry.policies[0] === RESPONSE_WRAPPING_POLICY_NAME;
}
