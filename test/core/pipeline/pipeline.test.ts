/**
 * The pipeline on its own: the order of its stages and where each one stops a request, over fakes
 * of the narrow interfaces the stages take (PipelineDeps). The stages themselves, and the real
 * stores behind them, are tested beside this file and through the HTTP API.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { BadRequestError, SealedError } from '../../../core/errors.js';
import type { Backend, PreparedRequest } from '../../../core/framework/backend.js';
import type { LogicalRequest, RequestTarget } from '../../../core/framework/request.js';
import type { ResolvedToken, TokenEntry } from '../../../core/auth/token-store.js';
import { InFlightRequests } from '../../../core/pipeline/in-flight.js';
import { Pipeline, type PipelineDeps, type RequestStrategy } from '../../../core/pipeline/pipeline.js';
import type { HostRequest } from '../../../core/pipeline/types.js';
import { MemoryStorage } from '../../../storage/memory.js';

const TOKEN = 'hvs.caller';

/** What happened, in order, as the fakes saw it. */
type Events = string[];

class FakeBarrier extends MemoryStorage {
  sealed = false;
}

/** A sys backend of two paths: `thing` needs a token, `open` needs none, `seal-status` is served sealed. */
function fakeSystem(events: Events, fail?: unknown): Backend {
  return {
    description: 'fake sys',
    prepare(target: RequestTarget): PreparedRequest {
      events.push(`prepare ${target.operation} ${target.path}`);
      return { pattern: target.path, operation: target.operation, sudo: false, anyToken: false, input: target.data, unknown: [] };
    },
    async execute(request: LogicalRequest): Promise<{ data: Record<string, unknown> }> {
      events.push(`execute ${request.operation} ${request.path}`);
      if (fail !== undefined) throw fail as Error;
      return { data: { answered: request.path, caller: request.auth?.accessor ?? null } };
    },
    isUnauthenticated: (path) => path === 'open' || path === 'seal-status',
    isAvailableSealed: (path) => path === 'seal-status',
    help(path) {
      events.push(`help ${path}`);
      return { help: `help for ${path}`, openapi: {} };
    },
    describePaths: () => [],
  };
}

function caller(): ResolvedToken {
  const entry: TokenEntry = {
    accessor: 'accessor-1', parent: '', policies: ['reader'], path: 'auth/token/create', meta: null, displayName: 'token',
    numUses: 0, creationTime: 0, ttl: 0, creationTtl: 0, expireTime: 0, explicitMaxTtl: 0, maxTtl: 0, period: 0,
    renewable: false, type: 'service', boundCidrs: [], entityId: '', role: '', lastRenewalTime: 0,
  };
  return { id: TOKEN, hash: 'hash-1', entry };
}

interface World {
  readonly events: Events;
  readonly barrier: FakeBarrier;
  readonly pipeline: Pipeline;
  readonly logged: string[];
}

/** A pipeline over fakes: `allowed` is what the caller's ACL answers, `audited` whether a device is enabled. */
function world(options: { allowed?: boolean; audited?: boolean; fail?: unknown; standby?: RequestStrategy } = {}): World {
  const events: Events = [];
  const logged: string[] = [];
  const barrier = new FakeBarrier();
  const token = caller();
  const decider = {
    allowOperation: (request: { path: string; operation: string }) => {
      events.push(`authorize ${request.operation} ${request.path}`);
      return { allowed: options.allowed ?? true, sudo: false, grantingPolicies: options.allowed === false ? [] : ['reader'] };
    },
  };
  const deps: PipelineDeps = {
    system: fakeSystem(events, options.fail),
    barrier,
    tokens: {
      lookupCached: (id) => {
        events.push('authenticate');
        return id === TOKEN ? token : undefined;
      },
      lookup: async () => undefined,
      spendsUse: () => false,
      use: async () => ({ allowed: true, last: false }),
      revokeTree: async () => {},
      now: () => 0,
      create: async () => {
        throw new Error('no login in these tests');
      },
    },
    acls: { cachedAclFor: () => decider, aclFor: async () => decider },
    wrapper: {
      wrap: async (_body, ttl, path) => {
        events.push(`wrap ${path} for ${ttl}s`);
        return { token: 'hvs.wrapping', accessor: 'wrapping-accessor', ttl, creation_time: '', creation_path: path };
      },
    },
    identity: { resolveAlias: async () => ({ entityId: '', aliasId: '' }) as never, syncExternalGroups: async () => undefined },
    leases: {
      register: async () => {
        throw new Error('no secrets in these tests');
      },
    },
    audit: {
      hasDevices: () => options.audited ?? true,
      headers: { select: () => ({}) },
      logRequest: async (input) => void events.push(`audit request ${input.request.path}`),
      logResponse: async (input) => void events.push(`audit response ${input.request.path}${input.error ? `: ${input.error}` : ''}`),
    },
    unsealed: {
      get mounts(): never {
        throw new SealedError();
      },
    },
    logger: pino({ level: 'error' }, { write: (line: string) => void logged.push(line) }),
    inFlight: new InFlightRequests(),
    lockout: {
      guard: async (entry, user, login) => {
        events.push(`lockout ${entry.accessor} ${user}`);
        return login();
      },
    },
    ...(options.standby ? { standby: options.standby } : {}),
  };
  return { events, barrier, pipeline: new Pipeline(deps), logged };
}

function request(path: string, more: Partial<HostRequest> = {}): HostRequest {
  return { method: 'GET', path, query: {}, body: undefined, headers: { 'x-vault-token': TOKEN }, remoteAddress: '127.0.0.1', ...more };
}

describe('the request pipeline', () => {
  it('runs a request through its stages in order: authenticate, prepare, authorize, audit the request, execute, audit the response', async () => {
    const { events, pipeline } = world();
    const response = await pipeline.handle(request('sys/thing'));
    expect(response.status).to.equal(200);
    expect((response.body as { data: unknown }).data).to.deep.equal({ answered: 'thing', caller: 'accessor-1' });
    expect(events).to.deep.equal([
      'authenticate',
      'prepare read thing',
      'authorize read sys/thing',
      'audit request sys/thing',
      'execute read thing',
      'audit response sys/thing',
    ]);
  });

  it('refuses a request without a token to a path that needs one with 403 before preparing it, and audits the refusal', async () => {
    const { events, pipeline } = world();
    const response = await pipeline.handle(request('sys/thing', { headers: {} }));
    expect(response.status).to.equal(403);
    expect(events).to.deep.equal(['audit request sys/thing', 'audit response sys/thing: permission denied']);
  });

  it('answers 403 to a caller the ACL refuses: the handler never runs, and the request and refusal are audited', async () => {
    const { events, pipeline } = world({ allowed: false });
    const response = await pipeline.handle(request('sys/thing', { method: 'POST', body: { a: 1 } }));
    expect(response.status).to.equal(403);
    expect(response.body).to.deep.equal({ errors: ['permission denied'] });
    expect(events).to.deep.equal([
      'authenticate',
      'prepare update thing',
      'authorize update sys/thing',
      'audit request sys/thing',
      'audit response sys/thing: permission denied',
    ]);
  });

  it('runs a path that needs no token without authorizing the caller', async () => {
    const { events, pipeline } = world({ allowed: false });
    const response = await pipeline.handle(request('sys/open', { headers: {} }));
    expect(response.status).to.equal(200);
    expect(events).to.deep.equal(['prepare read open', 'audit request sys/open', 'execute read open', 'audit response sys/open']);
  });

  it('answers 503 while sealed before anything else, but serves a path served sealed, unaudited', async () => {
    const { events, barrier, pipeline } = world();
    barrier.sealed = true;
    const refused = await pipeline.handle(request('sys/thing'));
    expect(refused.status).to.equal(503);
    expect(refused.body).to.deep.equal({ errors: [new SealedError().message] });
    expect(events).to.deep.equal([]);

    const served = await pipeline.handle(request('sys/seal-status'));
    expect(served.status).to.equal(200);
    expect(events).to.deep.equal(['prepare read seal-status', 'execute read seal-status']);
  });

  it('records nothing when no audit device is enabled', async () => {
    const { events, pipeline } = world({ audited: false });
    expect((await pipeline.handle(request('sys/thing'))).status).to.equal(200);
    expect(events).to.deep.equal(['authenticate', 'prepare read thing', 'authorize read sys/thing', 'execute read thing']);
  });

  it('answers ?help=1 once the caller is authenticated, without preparing or running the path', async () => {
    const { events, pipeline } = world();
    const response = await pipeline.handle(request('sys/thing', { query: { help: '1' } }));
    expect(response).to.deep.equal({ status: 200, body: { help: 'help for thing', openapi: {} } });
    expect(events).to.deep.equal(['authenticate', 'help thing']);
  });

  it("audits a handler's failure as the response and answers with its status", async () => {
    const { events, pipeline } = world({ fail: new BadRequestError('missing key') });
    const response = await pipeline.handle(request('sys/thing'));
    expect(response).to.deep.equal({ status: 400, body: { errors: ['missing key'] } });
    expect(events.slice(-2)).to.deep.equal(['execute read thing', 'audit response sys/thing: missing key']);
  });

  it('answers an unexpected failure 500 without its message, and logs it with the request id', async () => {
    const { pipeline, logged } = world({ fail: new Error('disk on fire at /var/secret') });
    const response = await pipeline.handle(request('sys/thing'));
    expect(response.status).to.equal(500);
    expect(JSON.stringify(response.body)).not.to.contain('disk on fire');
    expect(logged).to.have.length(1);
    const line = JSON.parse(logged[0]!) as Record<string, unknown>;
    expect(line).to.include({ msg: 'request failed', path: 'sys/thing', err: 'disk on fire at /var/secret' });
    expect(line.request_id).to.match(/^[0-9a-f-]{36}$/);
  });

  it('wraps an answer before auditing the response, when X-Vault-Wrap-TTL asks for it', async () => {
    const { events, pipeline } = world();
    const response = await pipeline.handle(request('sys/thing', { headers: { 'x-vault-token': TOKEN, 'x-vault-wrap-ttl': '60' } }));
    expect(response.status).to.equal(200);
    expect((response.body as { wrap_info: { token: string } }).wrap_info.token).to.equal('hvs.wrapping');
    expect(events.slice(-3)).to.deep.equal(['execute read thing', 'wrap sys/thing for 60s', 'audit response sys/thing']);
  });

  it('refuses a malformed request (a parent reference in the path) with 400 before routing it', async () => {
    const { events, pipeline } = world();
    const response = await pipeline.handle(request('sys/../thing'));
    expect(response.status).to.equal(400);
    expect(events).to.deep.equal([]);
  });

  it('runs every request through the HA strategy when there is one: an answer of its own keeps the stages from running', async () => {
    const seen: string[] = [];
    const forwarding: RequestStrategy = {
      run: async (http, local) => {
        seen.push(http.path);
        return http.path === 'sys/forwarded' ? { status: 307, body: { forwarded: true } } : local(http);
      },
    };
    const { events, pipeline } = world({ standby: forwarding });
    expect(await pipeline.handle(request('sys/forwarded'))).to.deep.equal({ status: 307, body: { forwarded: true } });
    expect(events).to.deep.equal([]);
    expect((await pipeline.handle(request('sys/thing'))).status).to.equal(200);
    expect(seen).to.deep.equal(['sys/forwarded', 'sys/thing']);
    expect(events).to.include('execute read thing');
  });
});
