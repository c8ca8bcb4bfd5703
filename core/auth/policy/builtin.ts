/**
 * The built-in policies, as Vault has them
 * (https://developer.hashicorp.com/vault/docs/concepts/policies#built-in-policies). `root` has no
 * text: an ACL holding it allows everything.
 * `default` is written to storage once, at the first unseal, and never overwritten afterwards, so
 * an operator's edits survive upgrades. `response-wrapping` is fixed and never listed; `control-group`
 * is a reserved name with no policy behind it.
 */

/** The policy that allows everything; it cannot be changed, deleted or combined with others. */
export const ROOT_POLICY_NAME = 'root';

/** Attached to every token unless the token was created with `no_default_policy`. */
export const DEFAULT_POLICY_NAME = 'default';

/** Attached only to response-wrapping tokens. */
export const RESPONSE_WRAPPING_POLICY_NAME = 'response-wrapping';

/** Vault reserves this name for control-group requests; reserved here so a Vault policy set imports unchanged. */
export const CONTROL_GROUP_POLICY_NAME = 'control-group';

/**
 * Names no one may write or delete through `sys/policy` or `sys/policies/acl`. Apart from `root`
 * (which only a root parent may pass on), no token may be created holding one of them.
 */
export const RESERVED_POLICY_NAMES: ReadonlySet<string> = new Set([ROOT_POLICY_NAME, RESPONSE_WRAPPING_POLICY_NAME, CONTROL_GROUP_POLICY_NAME]);

/**
 * What a token may always do about itself: Vault's default grants, in HCL, for the paths Keywarden
 * serves (test/core/auth/policy/default-policy.test.ts keeps every grant backed by a handler; a
 * Vault default grant joins here when its path is built).
 */
export const DEFAULT_POLICY = `# Built-in "default" policy: what every token may do about itself.
# It is written once when the storage is first unsealed; later edits are kept.

# Look up, renew and revoke the calling token.
path "auth/token/lookup-self" {
  capabilities = ["read"]
}

path "auth/token/renew-self" {
  capabilities = ["update"]
}

path "auth/token/revoke-self" {
  capabilities = ["update"]
}

# Ask which capabilities the calling token has on a path.
path "sys/capabilities-self" {
  capabilities = ["update"]
}

# Read the caller's own identity entity.
path "identity/entity/id/{{identity.entity.id}}" {
  capabilities = ["read"]
}

# The token's private cubbyhole.
path "cubbyhole/*" {
  capabilities = ["create", "read", "update", "delete", "list"]
}

# Response wrapping: wrap data, and look up or unwrap a wrapping token.
path "sys/wrapping/wrap" {
  capabilities = ["update"]
}

path "sys/wrapping/lookup" {
  capabilities = ["update"]
}

path "sys/wrapping/unwrap" {
  capabilities = ["update"]
}
`;

/** A wrapping token may read its own response from its cubbyhole and unwrap it. */
export const RESPONSE_WRAPPING_POLICY = `# Built-in "response-wrapping" policy, attached only to wrapping tokens.
path "cubbyhole/response" {
  capabilities = ["create", "read"]
}

path "sys/wrapping/unwrap" {
  capabilities = ["update"]
}
`;
