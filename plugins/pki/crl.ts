/**
 * Revocation and the CRL: a revoked certificate is recorded with its time, and the CRL (every
 * revoked certificate not yet expired, signed by the issuer, numbered) is built again at once, so
 * `crl` answers with it as soon as a revocation has answered. One change at a time (the `crl` lock).
 */
import { X509Certificate } from 'node:crypto';
import { BadRequestError } from '../../sdk/index.js';
import type { PkiContext } from './context.js';
import { signCrl } from './der.js';
import { normalizeSerial, serialOf, type StoredCrl } from './store.js';

/** How long a CRL is valid (Vault's default `config/crl` expiry). */
const CRL_LIFETIME_SECONDS = 72 * 3600;

/**
 * Revokes a stored certificate; revoking it again answers its first revocation time.
 * @throws BadRequestError for a serial never issued here (or issued with no_store) and for the CA itself.
 */
export async function revokeCertificate(ctx: PkiContext, serialNumber: string): Promise<{ revocation_time: number }> {
  const serial = normalizeSerial(serialNumber);
  return ctx.locks.run('crl', async () => {
    const issuer = await ctx.store.issuer();
    if (issuer && serialOf(issuer.cert) === serial) throw new BadRequestError('adding issuer (id: ' + issuer.issuerId + ') to its own CRL is not allowed');
    const already = await ctx.store.revoked(serial);
    if (already) return { revocation_time: already.revocation_time };
    const stored = await ctx.store.cert(serial);
    if (!stored) throw new BadRequestError(`certificate with serial ${serial} not found`);
    const revocationTime = Math.floor(ctx.clock.now().getTime() / 1000);
    await ctx.store.putRevoked(serial, { certificate: stored.certificate, revocation_time: revocationTime });
    await rebuildCrl(ctx);
    return { revocation_time: revocationTime };
  });
}

/** Builds and stores a new CRL; call under the `crl` lock. Returns undefined without an issuer. */
export async function rebuildCrl(ctx: PkiContext): Promise<StoredCrl | undefined> {
  const issuer = await ctx.store.issuer();
  if (!issuer) return undefined;
  const now = ctx.clock.now();
  const revoked = [];
  for (const serial of await ctx.store.revokedSerials()) {
    const entry = await ctx.store.revoked(serial);
    if (!entry) continue;
    // An expired certificate leaves the CRL (RFC 5280 section 3.3); tidy drops its record later.
    if (new Date(new X509Certificate(entry.certificate).validTo).getTime() < now.getTime()) continue;
    revoked.push({ serial: Buffer.from(serial.replace(/:/g, ''), 'hex'), revokedAt: new Date(entry.revocation_time * 1000) });
  }
  const number = ((await ctx.store.crl())?.number ?? 0) + 1;
  const der = signCrl(issuer.cert, issuer.key, revoked, number, now, new Date(now.getTime() + CRL_LIFETIME_SECONDS * 1000));
  const crl = { der: der.toString('base64'), number };
  await ctx.store.putCrl(crl);
  return crl;
}

/** The current CRL, DER; built when there is none yet. Undefined without an issuer. */
export async function currentCrl(ctx: PkiContext): Promise<Buffer | undefined> {
  const stored = (await ctx.store.crl()) ?? (await ctx.locks.run('crl', async () => (await ctx.store.crl()) ?? rebuildCrl(ctx)));
  return stored ? Buffer.from(stored.der, 'base64') : undefined;
}
