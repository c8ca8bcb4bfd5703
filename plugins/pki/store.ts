/**
 * What one pki mount stores, in its own storage view: its issuer (the CA certificate and key), the
 * URLs written into certificates, its roles, the certificates it issued and those revoked, and the
 * current CRL. Serial numbers are Vault's `3b:1a:…` form in the API and `3b-1a-…` in storage keys.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { Storage } from '../../sdk/index.js';
import type { Role } from './role.js';

/** Storage keys: each names what it holds. */
export const KEYS = {
  /** The mount's one issuer: its certificate and private key. */
  issuer: 'config/ca_bundle',
  /** `config/urls`: the AIA and CRL distribution URLs. */
  urls: 'config/urls',
  /** One role per key. */
  rolePrefix: 'role/',
  /** Every certificate issued (unless its role has no_store), by serial. */
  certPrefix: 'certs/',
  /** Every revoked certificate, by serial, with its revocation time. */
  revokedPrefix: 'revoked/',
  /** The current CRL and its number. */
  crl: 'crl',
} as const;

export interface StoredIssuer {
  readonly certificate: string;
  /** PKCS#8 PEM. */
  readonly privateKey: string;
  readonly issuerId: string;
  readonly keyId: string;
  readonly issuerName: string;
  readonly keyName: string;
}

export interface Issuer extends StoredIssuer {
  readonly cert: X509Certificate;
  readonly key: KeyObject;
}

export interface Urls {
  readonly issuing_certificates: string[];
  readonly crl_distribution_points: string[];
  readonly ocsp_servers: string[];
}

export const NO_URLS: Urls = { issuing_certificates: [], crl_distribution_points: [], ocsp_servers: [] };

export interface StoredCert {
  readonly certificate: string;
}

export interface RevokedCert {
  readonly certificate: string;
  /** Unix seconds. */
  readonly revocation_time: number;
}

export interface StoredCrl {
  /** DER, base64. */
  readonly der: string;
  readonly number: number;
}

/** `3B:1A-…` in any case and separator, or plain hexadecimal (as openssl prints it) → `3b:1a:…`. */
export function normalizeSerial(serial: string): string {
  const text = serial.trim().toLowerCase();
  if (/^[0-9a-f]+$/.test(text) && text.length > 2) return (text.length % 2 === 1 ? `0${text}` : text).match(/../g)!.join(':');
  return text.replace(/-/g, ':');
}

export function serialKey(serial: string): string {
  return normalizeSerial(serial).replace(/:/g, '-');
}

/** A certificate's serial in Vault's form. */
export function serialOf(cert: X509Certificate): string {
  const hex = cert.serialNumber.toLowerCase();
  return (hex.length % 2 === 1 ? `0${hex}` : hex).match(/../g)!.join(':');
}

export class PkiStore {
  constructor(private readonly storage: Storage) {}

  private async json<T>(key: string): Promise<T | undefined> {
    const raw = await this.storage.get(key);
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as T) : undefined;
  }

  private put(key: string, value: unknown): Promise<void> {
    return this.storage.put(key, Buffer.from(JSON.stringify(value)));
  }

  async issuer(): Promise<Issuer | undefined> {
    const stored = await this.json<StoredIssuer>(KEYS.issuer);
    if (!stored) return undefined;
    return { ...stored, cert: new X509Certificate(stored.certificate), key: createPrivateKey(stored.privateKey) };
  }

  putIssuer(issuer: StoredIssuer): Promise<void> {
    return this.put(KEYS.issuer, issuer);
  }

  /** Drops the issuer and the CRL it signed (DELETE root); issued certificates stay until tidied. */
  async deleteIssuer(): Promise<void> {
    await this.storage.batch([
      { type: 'delete', key: KEYS.issuer },
      { type: 'delete', key: KEYS.crl },
    ]);
  }

  async urls(): Promise<Urls> {
    return (await this.json<Urls>(KEYS.urls)) ?? NO_URLS;
  }

  putUrls(urls: Urls): Promise<void> {
    return this.put(KEYS.urls, urls);
  }

  role(name: string): Promise<Role | undefined> {
    return this.json<Role>(KEYS.rolePrefix + name);
  }

  putRole(name: string, role: Role): Promise<void> {
    return this.put(KEYS.rolePrefix + name, role);
  }

  deleteRole(name: string): Promise<void> {
    return this.storage.delete(KEYS.rolePrefix + name);
  }

  roles(): Promise<string[]> {
    return this.storage.list(KEYS.rolePrefix);
  }

  cert(serial: string): Promise<StoredCert | undefined> {
    return this.json<StoredCert>(KEYS.certPrefix + serialKey(serial));
  }

  putCert(serial: string, cert: StoredCert): Promise<void> {
    return this.put(KEYS.certPrefix + serialKey(serial), cert);
  }

  /** Serials in Vault's form. */
  async certSerials(): Promise<string[]> {
    return (await this.storage.list(KEYS.certPrefix)).map(normalizeSerial);
  }

  revoked(serial: string): Promise<RevokedCert | undefined> {
    return this.json<RevokedCert>(KEYS.revokedPrefix + serialKey(serial));
  }

  putRevoked(serial: string, revoked: RevokedCert): Promise<void> {
    return this.put(KEYS.revokedPrefix + serialKey(serial), revoked);
  }

  async revokedSerials(): Promise<string[]> {
    return (await this.storage.list(KEYS.revokedPrefix)).map(normalizeSerial);
  }

  async deleteCert(serial: string): Promise<void> {
    await this.storage.batch([
      { type: 'delete', key: KEYS.certPrefix + serialKey(serial) },
      { type: 'delete', key: KEYS.revokedPrefix + serialKey(serial) },
    ]);
  }

  crl(): Promise<StoredCrl | undefined> {
    return this.json<StoredCrl>(KEYS.crl);
  }

  putCrl(crl: StoredCrl): Promise<void> {
    return this.put(KEYS.crl, crl);
  }
}
