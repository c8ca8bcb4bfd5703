/**
 * What the scenarios that involve the cloud auth method share: whether it is there yet, a
 * well-formed iam login request, and an address where nothing listens.
 */
import net, { type AddressInfo } from 'node:net';
import { mountedPatterns, pluginRegistered, type ReliabilityServer } from './server.js';
import type { Api } from './http.js';
import { CANARY_PRINCIPAL } from './canary.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Why the cloud login scenarios cannot run yet, or undefined when they can. */
export function cloudLoginMissing(server: ReliabilityServer): string | undefined {
  if (!pluginRegistered(server, 'cloud')) return 'the cloud auth method ("cloud") is not registered yet (issue 7)';
  return undefined;
}

/** Why a scenario needing these paths of a mounted cloud method cannot run yet, or undefined. */
export function cloudPathsMissing(server: ReliabilityServer, mountPath: string, patterns: readonly string[]): string | undefined {
  const served = mountedPatterns(server, 'auth', mountPath);
  const missing = patterns.filter((p) => !served.includes(p));
  return missing.length > 0 ? `the cloud auth method does not serve ${missing.join(', ')} yet` : undefined;
}

/** A well-formed iam login (POST GetCallerIdentity, signed-looking headers) that the method forwards to its STS endpoint. */
export function iamLogin(extraHeaders: Record<string, string[]> = {}, url = 'https://sts.amazonaws.com/'): Record<string, unknown> {
  const headers = {
    'Content-Type': ['application/x-www-form-urlencoded; charset=utf-8'],
    'X-Amz-Date': ['20240101T000000Z'],
    Authorization: ['AWS4-HMAC-SHA256 Credential=AKIACLIENT/20240101/us-east-1/sts/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=00'],
    ...extraHeaders,
  };
  return {
    iam_http_request_method: 'POST',
    iam_request_url: b64(url),
    iam_request_body: b64('Action=GetCallerIdentity&Version=2011-06-15'),
    iam_request_headers: b64(JSON.stringify(headers)),
  };
}

/** A loopback URL nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * Mounts the cloud method at `auth/<mountPath>`, points it at `provider` (a canary in
 * `sts-identity` mode) and creates an iam role for the canary's principal; returns the login body.
 */
export async function setUpIamLogins(api: Api, mountPath: string, providerUrl: string, role = 'reliability'): Promise<Record<string, unknown>> {
  await api.expect('POST', `sys/auth/${mountPath}`, { type: 'cloud' });
  await api.expect('POST', `auth/${mountPath}/config/client`, { access_key: 'AKIARELIABILITY', secret_key: 'reliability-secret', sts_endpoint: providerUrl, sts_region: 'us-east-1', max_retries: 0 });
  await api.expect('POST', `auth/${mountPath}/role/${role}`, {
    auth_type: 'iam',
    bound_iam_principal_arn: [CANARY_PRINCIPAL.arn],
    resolve_cloud_unique_ids: false,
    token_policies: ['default'],
    token_ttl: '1h',
  });
  return { ...iamLogin(), role };
}
