/**
 * The type of the token a login or a token role issues, decided in one place. An auth mount's
 * `token_type` tune (or a token role's) either fixes the type (`service`, `batch`) or gives the
 * type a login gets when it asks for none (`default-service`, `default-batch`); a login asks
 * through its role's `token_type`, a token creation through its `type` field. These are Vault's
 * rules, as OpenBao's router applies them to every login
 * (https://github.com/openbao/openbao/blob/main/internal/vault/routing/router.go) and its token
 * store to a role (https://github.com/openbao/openbao/blob/main/internal/vault/token_store.go).
 */
import type { TokenType } from '../token-store.js';

/** What a mount's or a role's `token_type` may be. */
export type TokenTypeSetting = 'service' | 'batch' | 'default-service' | 'default-batch';

/** What a login or a creation asks for; `default` leaves it to the setting. */
export type AskedTokenType = TokenType | 'default';

/** The type issued: a fixed setting wins; then what was asked; then the setting's default (service when unset). */
export function issuedTokenType(setting: TokenTypeSetting | undefined, asked: AskedTokenType): TokenType {
  if (setting === 'service' || setting === 'batch') return setting;
  if (asked !== 'default') return asked;
  return setting === 'default-batch' ? 'batch' : 'service';
}
