/**
 * Vault's GlobbedStringsMatch, used by policy parameter constraints and by the cloud auth method's
 * principal bindings: `*x*` contains, `*x` suffix, `x*` prefix, otherwise equality; a pattern
 * shorter than two characters only matches itself, so a bare `*` matches nothing.
 */
export function globbedStringsMatch(pattern: string, value: string): boolean {
  if (pattern.length < 2) return pattern === value;
  const leading = pattern.startsWith('*');
  const trailing = pattern.endsWith('*');
  if (leading && trailing) return value.includes(pattern.slice(1, -1));
  if (leading) return value.endsWith(pattern.slice(1));
  if (trailing) return value.startsWith(pattern.slice(0, -1));
  return pattern === value;
}

/**
 * Glob matching as the Go library Vault's login methods use (github.com/ryanuber/go-glob): `*`
 * stands for any run of characters, anywhere and any number of times; there is no other special
 * character. A bare `*` matches everything. Used by the JWT method's `bound_claims_type=glob` and
 * the Kubernetes method's service account and namespace bindings.
 */
export function globMatch(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!value.startsWith(first)) return false;
  let at = first.length;
  for (const middle of parts.slice(1, -1)) {
    const found = value.indexOf(middle, at);
    if (found < 0) return false;
    at = found + middle.length;
  }
  return value.length - at >= last.length && value.endsWith(last);
}
