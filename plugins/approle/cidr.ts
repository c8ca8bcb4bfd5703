/** CIDR bounds of secret IDs: those a secret ID carries must lie inside its role's. */
import { isIP } from 'node:net';
import { cidrAllows } from '../../sdk/index.js';

/** `10.0.0.0/8` → its network address and prefix length (a plain address is a /32 or /128). */
function blockOf(cidr: string): { address: string; bits: number; family: number } {
  const [address = '', bits] = cidr.split('/');
  const family = isIP(address);
  return { address, bits: bits === undefined ? (family === 6 ? 128 : 32) : Number(bits), family };
}

/** Whether every block of `inner` lies inside some block of `outer` (any inner fits an empty outer). */
export function cidrsWithin(inner: readonly string[], outer: readonly string[]): boolean {
  if (outer.length === 0) return true;
  return inner.every((cidr) => {
    const block = blockOf(cidr);
    return outer.some((candidate) => {
      const around = blockOf(candidate);
      return around.family === block.family && around.bits <= block.bits && cidrAllows([candidate], block.address);
    });
  });
}
