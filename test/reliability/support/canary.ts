/**
 * A local HTTP server that records every connection and request it gets and answers the way a
 * broken provider would: an error document, garbage, a 5xx, nothing at all, or slowly — or as a
 * trusting STS that vouches for one principal (`sts-identity`, for load and crash scenarios that
 * need logins, with no signature checks). It stands in for the cloud provider where a test needs
 * one, and as the host a hostile client names, which must never be contacted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type CanaryBehaviour = 'sts-error' | 'garbage' | 'server-error' | 'hang' | 'slow-error' | 'sts-identity';

/** The principal the `sts-identity` behaviour vouches for, whoever signed the request. */
export const CANARY_PRINCIPAL = { arn: 'arn:aws:iam::123456789012:user/reliability', userId: 'AIDARELIABILITY0000001', account: '123456789012' } as const;

/** An answer the test decides itself (an EC2 DescribeInstances document, say). */
export type CanaryResponder = (req: { method: string; url: string; body: string }) => { status: number; contentType: string; body: string };

export interface Canary {
  readonly url: string;
  /** When set, answers every request instead of `behaviour`. */
  responder?: CanaryResponder;
  /** TCP connections accepted (a request need not follow). */
  readonly connections: () => number;
  readonly requests: { method: string; url: string; host: string }[];
  behaviour: CanaryBehaviour;
  close(): Promise<void>;
}

const STS_IDENTITY = `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>${CANARY_PRINCIPAL.arn}</Arn><UserId>${CANARY_PRINCIPAL.userId}</UserId><Account>${CANARY_PRINCIPAL.account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000001</RequestId></ResponseMetadata></GetCallerIdentityResponse>`;

const STS_ERROR = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>The security token included in the request is invalid.</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>`;

export async function startCanary(behaviour: CanaryBehaviour = 'sts-error'): Promise<Canary> {
  let connections = 0;
  const requests: Canary['requests'] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', host: req.headers.host ?? '' });
    if (canary.responder) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = canary.responder!({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString() });
        res.writeHead(answer.status, { 'Content-Type': answer.contentType }).end(answer.body);
      });
      return;
    }
    req.resume();
    switch (canary.behaviour) {
      case 'sts-identity':
        res.writeHead(200, { 'Content-Type': 'text/xml' }).end(STS_IDENTITY);
        return;
      case 'sts-error':
        res.writeHead(403, { 'Content-Type': 'text/xml' }).end(STS_ERROR);
        return;
      case 'garbage':
        res.writeHead(200, { 'Content-Type': 'text/xml' }).end('\u0000\u0001<<<not xml at all>>>{"Arn":"arn:aws:iam::123456789012:root"}');
        return;
      case 'server-error':
        res.writeHead(503, { 'Content-Type': 'text/xml' }).end('<ErrorResponse><Error><Code>ServiceUnavailable</Code></Error></ErrorResponse>');
        return;
      case 'hang':
        hanging.add(res);
        return;
      case 'slow-error':
        setTimeout(() => res.writeHead(403, { 'Content-Type': 'text/xml' }).end(STS_ERROR), 1_500).unref();
        return;
    }
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const canary: Canary = {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    requests,
    behaviour,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return canary;
}
