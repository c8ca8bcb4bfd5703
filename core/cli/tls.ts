/**
 * The CLI's TLS settings, read as the vault CLI reads them: each flag (-ca-cert, -ca-path,
 * -client-cert, -client-key, -tls-server-name, -tls-skip-verify) wins over its VAULT_* variable.
 * A CA certificate replaces the system's roots (as Go's RootCAs does), and -ca-cert wins over
 * -ca-path. Everything is loaded and checked before the first request, so a wrong path or a key
 * that does not match its certificate is reported as such, not as a failed handshake.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AgentOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import { ClientSetupError } from './client.js';

/** The TLS flags of a client command; each is undefined when not given on the command line. */
export interface TlsFlags {
  readonly caCert?: string;
  readonly caPath?: string;
  readonly clientCert?: string;
  readonly clientKey?: string;
  readonly tlsServerName?: string;
  readonly tlsSkipVerify?: boolean;
}

/** The environment variables behind those flags, as vault names them. */
export const TLS_ENVIRONMENT = {
  caCert: 'VAULT_CACERT',
  caPath: 'VAULT_CAPATH',
  clientCert: 'VAULT_CLIENT_CERT',
  clientKey: 'VAULT_CLIENT_KEY',
  tlsServerName: 'VAULT_TLS_SERVER_NAME',
  tlsSkipVerify: 'VAULT_SKIP_VERIFY',
} as const;

/** Go's strconv.ParseBool, which vault uses for VAULT_SKIP_VERIFY. */
function parseGoBool(name: string, raw: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  throw new ClientSetupError(`could not parse ${name}: "${raw}" is not a boolean (use true or false)`);
}

function readSetting(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ClientSetupError(`cannot read the ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** The PEM certificates in a file; a file with none, or with one that does not parse, is refused. */
function pemCertificates(file: string, what: string): string[] {
  const text = readSetting(file, what).toString('utf8');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new ClientSetupError(`the ${what} ${file} holds no PEM certificate`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      throw new ClientSetupError(`the ${what} ${file} holds a certificate that does not parse`);
    }
  }
  return blocks;
}

/** Every file under `dir`, subdirectories included, as go-rootcerts walks a CA path. */
function filesUnder(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch (err) {
    throw new ClientSetupError(`cannot read the CA directory ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return entries.flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/**
 * The https agent options for the given flags and environment.
 * @throws ClientSetupError for a setting that cannot be used.
 */
export function tlsAgentOptions(flags: TlsFlags, env: NodeJS.ProcessEnv): AgentOptions {
  // An empty variable counts as unset, as in vault's ReadEnvironment.
  const pick = (key: keyof typeof TLS_ENVIRONMENT): string | undefined => {
    const flag = flags[key];
    if (typeof flag === 'string' && flag !== '') return flag;
    return env[TLS_ENVIRONMENT[key]] || undefined;
  };
  const skipVerifyEnv = env[TLS_ENVIRONMENT.tlsSkipVerify];
  const skipVerify = flags.tlsSkipVerify === true || (skipVerifyEnv ? parseGoBool(TLS_ENVIRONMENT.tlsSkipVerify, skipVerifyEnv) : false);

  const caCert = pick('caCert');
  const caPath = pick('caPath');
  const ca = caCert ? pemCertificates(caCert, 'CA certificate') : caPath ? filesUnder(caPath).flatMap((f) => pemCertificates(f, 'CA certificate')) : undefined;

  const clientCert = pick('clientCert');
  const clientKey = pick('clientKey');
  if (Boolean(clientCert) !== Boolean(clientKey)) throw new ClientSetupError('both client cert and client key must be provided (-client-cert and -client-key)');
  let identity: { cert: Buffer; key: Buffer } | undefined;
  if (clientCert && clientKey) {
    identity = { cert: readSetting(clientCert, 'client certificate'), key: readSetting(clientKey, 'client key') };
    try {
      createSecureContext(identity);
    } catch (err) {
      throw new ClientSetupError(`the client certificate ${clientCert} and key ${clientKey} cannot be used together: ${(err as Error).message}`);
    }
  }

  const serverName = pick('tlsServerName');
  return {
    keepAlive: false,
    rejectUnauthorized: !skipVerify,
    ...(ca ? { ca } : {}),
    ...(identity ?? {}),
    ...(serverName ? { servername: serverName } : {}),
  };
}
