/** Bound CIDRs: whether a client address is inside any of a token's allowed blocks. */
import { BlockList, isIP } from 'node:net';

export function cidrAllows(cidrs: readonly string[], address: string): boolean {
  if (cidrs.length === 0) return true;
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/');
    if (!net || isIP(net) === 0) continue;
    const netFamily = isIP(net) === 6 ? 'ipv6' : 'ipv4';
    const prefix = bits === undefined ? (netFamily === 'ipv6' ? 128 : 32) : Number(bits);
    list.addSubnet(net, prefix, netFamily);
  }
  return isIP(plain) !== 0 && list.check(plain, family);
}
