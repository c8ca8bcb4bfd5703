/**
 * Builds the body of a cloud (iam) login, as the vault CLI does for its aws method: a
 * GetCallerIdentity request signed with SigV4 by the AWS SDK's own signer, with credentials from
 * the fields, the CLOUD_* variables, or the AWS SDK's default credential chain. The server
 * forwards it to its own configured STS endpoint, never to the URL in the request.
 */
import { UsageError } from './client.js';

const BODY = 'Action=GetCallerIdentity&Version=2011-06-15';
/** The header's neutral name (docs/cloud-auth.md); the server accepts X-Vault-AWS-IAM-Server-ID too. */
const SERVER_ID_HEADER = 'X-Service-Cloud-IAM-Server-ID';

function field(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`${name} must be given once`);
  return value;
}

export async function cloudLoginBody(fields: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  // Loaded here, not with the CLI: every command, the server included, would otherwise load the
  // AWS SDK's signer and credential chain (megabytes of heap that every full collection marks).
  const [{ Hash }, { SignatureV4 }, { defaultProvider }] = await Promise.all([import('@smithy/hash-node'), import('@smithy/signature-v4'), import('@aws-sdk/credential-provider-node')]);
  const known = new Set(['role', 'header_value', 'region', 'sts_endpoint', 'access_key', 'secret_key', 'session_token']);
  for (const key of Object.keys(fields)) if (!known.has(key)) throw new UsageError(`unknown login field "${key}" (known: ${[...known].join(', ')})`);
  const region = field(fields, 'region') ?? env.CLOUD_REGION ?? 'us-east-1';
  const endpoint = new URL(field(fields, 'sts_endpoint') ?? (region === 'us-east-1' ? 'https://sts.amazonaws.com/' : `https://sts.${region}.amazonaws.com/`));
  const accessKeyId = field(fields, 'access_key') ?? env.CLOUD_ACCESS_KEY;
  const secretAccessKey = field(fields, 'secret_key') ?? env.CLOUD_SECRET_KEY;
  const sessionToken = field(fields, 'session_token') ?? env.CLOUD_SESSION_TOKEN;
  const credentials =
    accessKeyId && secretAccessKey
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : await defaultProvider()().catch((err: unknown) => {
          throw new UsageError(`no cloud credentials: set CLOUD_ACCESS_KEY and CLOUD_SECRET_KEY, or configure the AWS SDK (${(err as Error).message})`);
        });
  const headerValue = field(fields, 'header_value');
  const request = {
    method: 'POST',
    protocol: endpoint.protocol,
    hostname: endpoint.hostname,
    ...(endpoint.port ? { port: Number(endpoint.port) } : {}),
    path: endpoint.pathname,
    headers: {
      host: endpoint.host,
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      ...(headerValue ? { [SERVER_ID_HEADER]: headerValue } : {}),
    },
    body: BODY,
    query: {},
  };
  const signed = await new SignatureV4({ credentials, region, service: 'sts', sha256: Hash.bind(null, 'sha256') }).sign(request);
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name] = [String(value)];
  const role = field(fields, 'role');
  return {
    iam_http_request_method: 'POST',
    iam_request_url: Buffer.from(endpoint.toString()).toString('base64'),
    iam_request_body: Buffer.from(BODY).toString('base64'),
    iam_request_headers: Buffer.from(JSON.stringify(headers)).toString('base64'),
    ...(role ? { role } : {}),
  };
}
