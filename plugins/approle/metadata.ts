/** The `metadata` of a secret ID: string keys and values, sent as Vault's clients send them. */
import { BadRequestError } from '../../sdk/index.js';

/**
 * Vault's strutil.ParseArbitraryKeyValues: a JSON object of strings, the same as base64, or
 * `k1=v1,k2=v2`; "" is none.
 * @throws BadRequestError when it is none of these.
 */
export function parseMetadata(raw: string | undefined): Record<string, string> {
  if (!raw || raw.trim() === '') return {};
  let text = raw.trim();
  if (!text.startsWith('{')) {
    const decoded = Buffer.from(text, 'base64').toString('utf8');
    if (decoded.trim().startsWith('{')) text = decoded.trim();
  }
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BadRequestError('failed to parse metadata: not a JSON object');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadRequestError('failed to parse metadata: not a JSON object');
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value !== 'string') throw new BadRequestError(`failed to parse metadata: the value of "${key}" is not a string`);
      out[key] = value;
    }
    return out;
  }
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new BadRequestError(`failed to parse metadata: "${pair}" is not key=value`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}
