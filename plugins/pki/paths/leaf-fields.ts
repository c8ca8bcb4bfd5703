/** The fields `issue/:role` and `sign/:role` share, and the Vault fields both refuse (docs/pki.md). */
export const LEAF_FIELDS = {
  common_name: { type: 'string', description: 'The CN of the certificate.', default: '' },
  alt_names: { type: 'comma-string-list', description: 'DNS and e-mail subject alternative names.', default: [] as string[] },
  ip_sans: { type: 'comma-string-list', description: 'IP subject alternative names.', default: [] as string[] },
  ttl: { type: 'duration', description: 'The TTL; the role\'s when unset, never beyond its max_ttl.', default: 0 },
  exclude_cn_from_sans: { type: 'bool', description: 'Leave the CN out of the SANs.', default: false },
  format: { type: 'string', description: 'Only `pem`.', default: 'pem', allowedValues: ['pem'] },
  issuer_ref: { type: 'string', description: 'Only `default`: one issuer per mount.', default: 'default', allowedValues: ['default', ''] },
} as const;

export const LEAF_REFUSED = {
  uri_sans: 'URI SANs are not supported by Keywarden\'s pki engine',
  other_sans: 'other SANs are not supported by Keywarden\'s pki engine',
  user_ids: 'user ids are not supported by Keywarden\'s pki engine',
  serial_number: 'subject serial numbers are not supported by Keywarden\'s pki engine',
  not_after: 'set ttl instead',
  remove_roots_from_chain: 'the chain is the one root',
} as const;
