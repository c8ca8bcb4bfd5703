/**
 * Arbitraries for fuzzing HTTP/1.1 framing: sequences of well-framed requests (LIST among them,
 * bodies by Content-Length or chunked with extensions and trailers, bodies that look like
 * requests, empty lines between requests), each with the answer it must get whatever else is
 * pipelined beside it, and the offsets at which the byte stream is cut into TCP writes.
 */
import fc from 'fast-check';
import { rawRequest, type RawRequestSpec } from '../../helpers/raw-http.js';

export interface FramedRequest {
  /** The request's bytes, empty lines before it included. */
  readonly bytes: Buffer;
  readonly status: number;
  /** Answered with headers only. */
  readonly head: boolean;
  /** A LIST of the ACL policies: its answer lists `default` (a GET there answers 405). */
  readonly listsPolicies: boolean;
  readonly summary: string;
}

export interface FramedExchange {
  readonly requests: readonly FramedRequest[];
  /** Offsets in the concatenated bytes where one write ends and the next begins, ascending. */
  readonly cuts: readonly number[];
}

interface RequestKind {
  readonly spec: Omit<RawRequestSpec, 'chunks' | 'chunkExtension' | 'trailers'>;
  readonly status: number;
  readonly listsPolicies?: boolean;
}

/** Pieces of requests and of chunked framing, so that bodies look like the start of another request. */
const REQUEST_SHAPED = [
  'LIST /v1/sys/policies/acl HTTP/1.1\r\n',
  'GET /v1/sys/seal-status HTTP/1.1\r\nHost: x\r\n\r\n',
  'LIST ',
  'LI',
  '\r\n',
  '\r\n\r\n',
  'Content-Length: 5\r\n',
  'Transfer-Encoding: chunked\r\n',
  '0\r\n\r\n',
];

const requestShapedBody = fc
  .array(fc.oneof(fc.constantFrom(...REQUEST_SHAPED), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 40 })), { minLength: 1, maxLength: 6 })
  .map((pieces) => pieces.join(''));

/** Absent, or one of the body framings, as options of rawRequest. */
const bodyFraming: fc.Arbitrary<Pick<RawRequestSpec, 'chunks' | 'chunkExtension' | 'trailers'>> = fc.oneof(
  fc.constant({}),
  fc.record({
    chunks: fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 4 }),
    chunkExtension: fc.constantFrom('', ';fz', ';fz="LIST x"'),
    trailers: fc.constantFrom('', 'X-Fz-Trailer: LIST /v1/sys/policies/acl HTTP/1.1\r\n'),
  }),
);

function requestKinds(token: string): fc.Arbitrary<RequestKind> {
  const headers = { 'X-Vault-Token': token };
  const policy = fc.constantFrom('/v1/sys/policies/acl/fz-frame-a', '/v1/sys/policies/acl/fz-frame-b');
  const body = fc.option(requestShapedBody, { nil: undefined });
  return fc.oneof(
    // GET, HEAD and LIST are answered before any body is read; theirs must be skipped, never parsed.
    body.map((b) => ({ spec: { method: 'GET', path: '/v1/sys/health', body: b }, status: 200 })),
    body.map((b) => ({ spec: { method: 'HEAD', path: '/v1/sys/health', body: b }, status: 200 })),
    body.map((b) => ({ spec: { method: 'LIST', path: '/v1/sys/policies/acl', headers, body: b }, status: 200, listsPolicies: true })),
    fc.tuple(fc.constantFrom('POST', 'PUT'), policy).map(([method, path]) => ({
      spec: { method, path, headers, body: JSON.stringify({ policy: 'path "fz/*" { capabilities = ["read"] }' }) },
      status: 204,
    })),
    // Not JSON (it starts with a request line): read whole, then refused, on a connection that stays open.
    fc.tuple(policy, requestShapedBody).map(([path, b]) => ({ spec: { method: 'POST', path, headers, body: `${REQUEST_SHAPED[0]}${b}` }, status: 400 })),
    policy.map((path) => ({ spec: { method: 'DELETE', path, headers }, status: 204 })),
  );
}

function framedRequest(token: string): fc.Arbitrary<FramedRequest> {
  return fc.tuple(requestKinds(token), bodyFraming, fc.constantFrom('', '', '', '\r\n', '\n', '\r\n\r\n')).map(([kind, framing, emptyLines]) => {
    const spec = { ...kind.spec, ...(kind.spec.body === undefined ? {} : framing) };
    const bodyText = spec.body === undefined ? '' : ` with a ${spec.chunks ? 'chunked' : 'Content-Length'} body ${JSON.stringify(spec.body)}`;
    return {
      bytes: Buffer.concat([Buffer.from(emptyLines), rawRequest(spec)]),
      status: kind.status,
      head: spec.method === 'HEAD',
      listsPolicies: kind.listsPolicies === true,
      summary: `${JSON.stringify(emptyLines)} ${spec.method} ${spec.path}${bodyText}`,
    };
  });
}

/** Up to eight requests; their bytes cut into up to seven writes. */
export function framedExchanges(token: string): fc.Arbitrary<FramedExchange> {
  return fc
    .record({
      requests: fc.array(framedRequest(token), { minLength: 1, maxLength: 8 }),
      cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
    })
    .map(({ requests, cuts }) => {
      const length = requests.reduce((sum, r) => sum + r.bytes.length, 0);
      const offsets = [...new Set(cuts.map((c) => Math.floor(c * length)))].filter((c) => c > 0).sort((a, b) => a - b);
      // How fast-check prints a counterexample: the requests in words, not their bytes.
      const describe = () => `${requests.map((r) => r.summary).join(' | ')} (writes cut at ${JSON.stringify(offsets)})`;
      return { requests, cuts: offsets, [fc.toStringMethod]: describe };
    });
}
