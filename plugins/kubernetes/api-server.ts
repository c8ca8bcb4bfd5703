/**
 * The two calls this method makes to the Kubernetes API server the configuration names: a
 * TokenReview (POST /apis/authentication.k8s.io/v1/tokenreviews), which says whether a service
 * account token is valid now (not revoked, its account not deleted), and a namespace read (GET
 * /api/v1/namespaces/:name) for roles that select namespaces by label. Both authenticate with the
 * reviewer's token. An API server that cannot be reached, is slow or fails is not the client's
 * fault: ApiServerUnavailableError (502); an answer that refuses the token is ReviewRefusedError (403).
 */
import { OutboundError, outboundRequest } from '../../sdk/index.js';

/** The largest answer read from the API server, in bytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

export class ApiServerUnavailableError extends Error {}
export class ReviewRefusedError extends Error {}

export interface ApiServer {
  readonly host: string;
  /** CA certificates of the API server (PEM); the system's when empty. */
  readonly caPem: string;
  /** The bearer token of the calls. */
  readonly bearer: string;
  readonly timeoutMs: number;
}

export interface ReviewedAccount {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

async function call(api: ApiServer, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
  const url = `${api.host.replace(/\/+$/, '')}${path}`;
  let res;
  try {
    res = await outboundRequest(url, {
      method,
      headers: { Authorization: `Bearer ${api.bearer}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      ...(api.caPem ? { caPem: api.caPem } : {}),
      timeoutMs: api.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
  } catch (err) {
    throw new ApiServerUnavailableError(`the Kubernetes API server could not be asked: ${err instanceof OutboundError ? err.message : (err as Error).message}`);
  }
  if (res.status >= 500) throw new ApiServerUnavailableError(`the Kubernetes API server answered ${res.status}`);
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(res.body.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

/** The API server's review of `token` for `audiences`: the account it belongs to, or a refusal saying why. */
export async function reviewToken(api: ApiServer, token: string, audiences: readonly string[]): Promise<ReviewedAccount> {
  const review = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token, ...(audiences.length > 0 ? { audiences } : {}) },
  };
  const { status, json } = await call(api, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', review);
  if (status === 401) throw new ReviewRefusedError('lookup failed: service account unauthorized; this could mean it has been deleted or recreated with a new token');
  if (status < 200 || status > 206) throw new ReviewRefusedError(`lookup failed: the API server answered ${status}${statusMessage(json)}`);
  if (!json) throw new ApiServerUnavailableError('the Kubernetes API server answered something that is not a TokenReview');
  if (json.kind === 'Status' && json.status !== 'Success') throw new ReviewRefusedError(`lookup failed${statusMessage(json)}`);
  const result = (json.status ?? {}) as { authenticated?: unknown; error?: unknown; audiences?: unknown; user?: { username?: unknown; uid?: unknown } };
  if (typeof result.error === 'string' && result.error !== '') throw new ReviewRefusedError(`lookup failed: ${result.error}`);
  if (result.authenticated !== true) throw new ReviewRefusedError('lookup failed: service account jwt not valid');
  if (audiences.length > 0) {
    const granted = Array.isArray(result.audiences) ? result.audiences : [];
    if (!audiences.some((a) => granted.includes(a))) {
      throw new ReviewRefusedError(`lookup failed: service account jwt valid for audience(s) [${granted.join(' ')}], but wanted [${audiences.join(' ')}]`);
    }
  }
  const parts = typeof result.user?.username === 'string' ? result.user.username.split(':') : [];
  if (parts.length !== 4) throw new ReviewRefusedError('lookup failed: unexpected username format');
  if (parts[0] !== 'system' || parts[1] !== 'serviceaccount') throw new ReviewRefusedError('lookup failed: username returned is not a service account');
  return { namespace: parts[2]!, name: parts[3]!, uid: typeof result.user?.uid === 'string' ? result.user.uid : '' };
}

/** The labels of a namespace. */
export async function namespaceLabels(api: ApiServer, namespace: string): Promise<Record<string, string>> {
  const { status, json } = await call(api, 'GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}`);
  if (status !== 200) throw new ReviewRefusedError(`failed to get namespace (code ${status}${statusMessage(json)})`);
  const labels = (json?.metadata as { labels?: unknown } | undefined)?.labels;
  if (labels === undefined || labels === null) return {};
  if (typeof labels !== 'object' || Array.isArray(labels)) throw new ApiServerUnavailableError('the Kubernetes API server answered a namespace with malformed labels');
  return Object.fromEntries(Object.entries(labels).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** A Kubernetes Status object's message, for an error text. */
function statusMessage(json: Record<string, unknown> | undefined): string {
  return typeof json?.message === 'string' ? `: ${json.message.slice(0, 200)}` : '';
}
