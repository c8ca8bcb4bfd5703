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
