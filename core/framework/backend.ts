/**
 * A backend as the host sees it, and `FrameworkBackend`, the implementation every plugin (and the
 * sys backend) builds from declarative paths. Routing picks the most specific matching pattern,
 * so the order paths are declared in never matters; two patterns that could match the same path
 * with equal specificity are refused when the backend is built.
 */
import { BadRequestError, NotFoundError, UnsupportedOperationError } from '../errors.js';
import { compileFields, type CompiledFields } from './schema.js';
import type { FieldSpecs, FieldValues } from './fields.js';
import { PathPattern, type AnyPathDefinition } from './path.js';
import type { AuthResult, LeasedSecret, LogicalRequest, LogicalResponse, Operation, RequestTarget, SecretRenewal, SecretRequest } from './request.js';
import { renderHelp, type PathHelp } from './help.js';
import { refuseUnhonoured } from './refused-fields.js';

/**
 * What `prepare` decided about a request, as plain data: the path it matched, the final operation,
 * what authorization must check, and the handler's input. It crosses to an isolated plugin's
 * process as it is, and `execute` runs the request from it.
 */
export interface PreparedRequest {
  /** The pattern of the path definition the request matched. */
  readonly pattern: string;
  /** The final operation: an `update` the existence check found no target for is a `create`. */
  readonly operation: Operation;
  /** The path needs sudo (PathDefinition.sudo). */
  readonly sudo: boolean;
  /** Any authenticated token may run it; the handler authorizes (PathDefinition.anyToken). */
  readonly anyToken: boolean;
  /** The handler's input: fields coerced, defaults applied, path segments over body fields. */
  readonly input: Readonly<Record<string, unknown>>;
  /** Fields the path does not know, sorted; the answer warns about them. */
  readonly unknown: readonly string[];
  /**
   * Why the input is invalid (a refused or malformed field), answered as a 400 only once the
   * caller is authorized: as in Vault, a caller without access learns nothing of a path's fields.
   */
  readonly invalid?: string;
  /** A login under user lockout: the user it names (PathDefinition.userLockout). */
  readonly lockoutUser?: string;
}

/** The lifecycle a backend may take part in; every hook is optional. */
export interface BackendHooks {
  /** After construction, before the first request (e.g. warm caches from storage). */
  initialize?(): Promise<void>;
  /** Run by the host's timer (auto-rotation, tidy); never schedule timers in a plugin. */
  periodic?(): Promise<void>;
  /** Before the backend is dropped (unmount, reload, seal): release what it holds. */
  cleanup?(): Promise<void>;
  /** For auth methods: a token minted from this backend's login is being renewed; throw to refuse. */
  renew?(req: LogicalRequest, auth: AuthResult): Promise<AuthResult>;
  /**
   * For secrets engines: the lease of a secret this backend issued (`LogicalResponse.secret`) is
   * being renewed; answer the TTL granted (the host caps it by the lease's max TTL), or throw to
   * refuse. Without it no lease of this backend is renewable.
   */
  renewSecret?(req: SecretRequest, secret: LeasedSecret): Promise<SecretRenewal>;
  /**
   * For secrets engines: the lease of a secret this backend issued is being revoked (by a client,
   * its expiry or the mount's removal); undo the secret. The lease is dropped only once this
   * returns; a throw leaves it in place (a forced revocation drops it anyway). Without it a lease
   * is dropped with nothing to undo.
   */
  revokeSecret?(req: SecretRequest, secret: LeasedSecret): Promise<void>;
  /**
   * Another node of an HA cluster changed `key` (relative to this mount's storage): drop whatever
   * is cached from it. Synchronous, so nothing can read the stale copy once the host has called it.
   */
  invalidate?(key: string): void;
}

export interface Backend extends BackendHooks {
  readonly description: string;
  /**
   * Matches the path, validates the input, applies the existence check and picks the operation;
   * a backend may answer at once (the pipeline then spends no turn of the event loop on it) or
   * with a promise.
   */
  prepare(target: RequestTarget): PreparedRequest | Promise<PreparedRequest>;
  /** Runs a prepared request's handler with the request as authorized (`request.operation` is `prepared.operation`). */
  execute(request: LogicalRequest, prepared: PreparedRequest): Promise<LogicalResponse | null>;
  /** Whether a path is reachable without a token. */
  isUnauthenticated(path: string): boolean;
  /** Whether a path is served while sealed (only the sys backend has such paths). */
  isAvailableSealed?(path: string): boolean;
  /** Whether a path's POST/PUT body is handed over unread (see PathDefinition.binaryBody). */
  takesBinaryBody?(path: string): boolean;
  help(path: string): { help: string; openapi: Record<string, unknown> };
  /** Every path with its fields and operations, for OpenAPI. */
  describePaths(): readonly PathHelp[];
}

/** How many paths `match` remembers, and the longest it remembers. */
const MATCH_CACHE_SIZE = 1024;
const MATCH_CACHE_MAX_PATH = 256;

/** A path matched to its definition; `params` is shared by every request of that path and never changed. */
interface PathMatch {
  readonly path: CompiledPath;
  readonly params: Readonly<Record<string, string>>;
}

interface CompiledPath {
  readonly definition: AnyPathDefinition;
  readonly pattern: PathPattern;
  readonly fields: CompiledFields;
  /** The path's own `prepare`, with what it never needs (refused fields, an existence check, warnings) decided once. */
  readonly prepare: (target: RequestTarget, params: Readonly<Record<string, string>>) => PreparedRequest | Promise<PreparedRequest>;
}

/** No unknown fields: shared by every request that has none. */
const NO_FIELDS: readonly string[] = Object.freeze([]);

/** Compiles one definition, checking what can be checked before any request. */
function compilePath(definition: AnyPathDefinition): CompiledPath {
  const pattern = new PathPattern(definition.pattern);
  for (const param of pattern.params) {
    if (!(param in definition.fields)) throw new Error(`path "${definition.pattern}": segment "${param}" has no field`);
  }
  for (const [name, spec] of Object.entries(definition.fields as FieldSpecs)) {
    if (!spec.description) throw new Error(`path "${definition.pattern}": field "${name}" has no description`);
  }
  for (const name of Object.keys(definition.refusedFields ?? {})) {
    if (name in definition.fields) throw new Error(`path "${definition.pattern}": field "${name}" is both declared and refused`);
  }
  const operations = definition.operations;
  if (Object.keys(operations).length === 0) throw new Error(`path "${definition.pattern}": no operations`);
  const fields = compileFields(definition.fields as FieldSpecs);
  const refused = definition.refusedFields && Object.keys(definition.refusedFields).length > 0 ? definition.refusedFields : undefined;
  const freeForm = definition.freeFormData === true;
  const existenceCheck = definition.existenceCheck;
  const source = definition.pattern;
  const sudo = definition.sudo ?? false;
  const anyToken = definition.anyToken ?? false;
  const userLockout = definition.userLockout;

  const prepared = (operation: Operation, input: Record<string, unknown>, unknown: readonly string[]): PreparedRequest => {
    if (!operations[operation]) throw new UnsupportedOperationError();
    const lockoutUser = userLockout && (operation === 'update' || operation === 'create') ? userLockout(input) : undefined;
    return { pattern: source, operation, sudo, anyToken, input, unknown, ...(lockoutUser ? { lockoutUser } : {}) };
  };

  return {
    definition,
    pattern,
    fields,
    prepare(target, params) {
      // Path segments win over body fields of the same name, as in Vault. Invalid input is answered
      // only once the caller is authorized (`execute` throws it), so a caller without access learns
      // nothing about a path's fields from a 400: as in Vault, permission is checked first. No
      // existence check can run on invalid input; the request's own operation is authorized then.
      // Refused fields are checked before the schema, so a refused field is what the answer names
      // even when others are missing.
      let parsed: ReturnType<CompiledFields['parse']>;
      try {
        if (refused) refuseUnhonoured(refused, target.data);
        parsed = fields.parse(target.data, params);
      } catch (err) {
        if (!(err instanceof BadRequestError)) throw err;
        const operation = target.operation;
        if (!operations[operation] && !(operation === 'update' && operations.create)) throw new UnsupportedOperationError();
        return { pattern: source, operation, sudo, anyToken, input: {}, unknown: NO_FIELDS, invalid: err.message };
      }
      // A refused field that got this far asks for nothing: Vault knows it, so it is not "unrecognized".
      const unknown = freeForm || parsed.unknown.length === 0 ? NO_FIELDS : refused ? parsed.unknown.filter((name) => !Object.hasOwn(refused, name)) : parsed.unknown;
      if (target.operation !== 'update' || !existenceCheck) return prepared(target.operation, parsed.input, unknown);
      // A check may answer at once (a cached key) or read storage first.
      const exists = existenceCheck(target, parsed.input);
      if (exists instanceof Promise) return exists.then((found) => prepared(found ? 'update' : 'create', parsed.input, unknown));
      return prepared(exists ? 'update' : 'create', parsed.input, unknown);
    },
  };
}

export interface FrameworkBackendOptions extends BackendHooks {
  readonly description: string;
  readonly paths: readonly AnyPathDefinition[];
}

export class FrameworkBackend implements Backend {
  readonly description: string;
  private readonly compiled: readonly CompiledPath[];
  /** Each path by its pattern, for `execute`: patterns are unique, as two equal ones would be ambiguous. */
  private readonly byPattern: ReadonlyMap<string, CompiledPath>;
  private readonly hooks: BackendHooks;

  constructor(options: FrameworkBackendOptions) {
    this.description = options.description;
    this.compiled = options.paths.map(compilePath);
    this.byPattern = new Map(this.compiled.map((path) => [path.definition.pattern, path]));
    assertUnambiguous(this.compiled.map((c) => c.pattern));
    this.hooks = options;
    if (options.initialize) this.initialize = () => options.initialize!();
    if (options.periodic) this.periodic = () => options.periodic!();
    if (options.cleanup) this.cleanup = () => options.cleanup!();
    if (options.renew) this.renew = (req, auth) => options.renew!(req, auth);
    if (options.renewSecret) this.renewSecret = (req, secret) => options.renewSecret!(req, secret);
    if (options.revokeSecret) this.revokeSecret = (req, secret) => options.revokeSecret!(req, secret);
    if (options.invalidate) this.invalidate = (key) => options.invalidate!(key);
  }

  initialize?(): Promise<void>;
  periodic?(): Promise<void>;
  cleanup?(): Promise<void>;
  renew?(req: LogicalRequest, auth: AuthResult): Promise<AuthResult>;
  renewSecret?(req: SecretRequest, secret: LeasedSecret): Promise<SecretRenewal>;
  revokeSecret?(req: SecretRequest, secret: LeasedSecret): Promise<void>;
  invalidate?(key: string): void;

  /**
   * Recent matches by path: routing is a pure function of the path, a request matches twice (its
   * token check asks whether the path is unauthenticated, then `prepare`), and a mount sees the same
   * few paths again and again. Bounded, and only short paths are kept, since clients choose them.
   */
  private readonly recentMatches = new Map<string, PathMatch | null>();

  private match(path: string): PathMatch | undefined {
    const cached = this.recentMatches.get(path);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.matchAll(path);
    if (path.length <= MATCH_CACHE_MAX_PATH) {
      if (this.recentMatches.size >= MATCH_CACHE_SIZE) this.recentMatches.clear();
      this.recentMatches.set(path, found ?? null);
    }
    return found;
  }

  private matchAll(path: string): PathMatch | undefined {
    let best: PathMatch | undefined;
    for (const candidate of this.compiled) {
      const params = candidate.pattern.match(path);
      if (params && (!best || candidate.pattern.specificity > best.path.pattern.specificity)) {
        best = { path: candidate, params };
      }
    }
    return best;
  }

  /** At once, unless the path's existence check has to read storage to pick create or update (it answers with a promise then). */
  prepare(target: RequestTarget): PreparedRequest | Promise<PreparedRequest> {
    const found = this.match(target.path);
    if (!found) throw new NotFoundError('unsupported path');
    return found.path.prepare(target, found.params);
  }

  /** Runs the handler `prepare` chose; its own promise is the answer unless unknown fields add a warning. */
  execute(request: LogicalRequest, prepared: PreparedRequest): Promise<LogicalResponse | null> {
    if (prepared.invalid !== undefined) return Promise.reject(new BadRequestError(prepared.invalid));
    const spec = this.byPattern.get(prepared.pattern)?.definition.operations[prepared.operation];
    if (!spec) return Promise.reject(new UnsupportedOperationError());
    const response = spec.handler(request, prepared.input as FieldValues<FieldSpecs>);
    return prepared.unknown.length === 0 ? response : withUnknownWarning(response, prepared.unknown);
  }

  isUnauthenticated(path: string): boolean {
    return this.match(path)?.path.definition.unauthenticated ?? false;
  }

  isAvailableSealed(path: string): boolean {
    return this.match(path)?.path.definition.allowedWhileSealed ?? false;
  }

  takesBinaryBody(path: string): boolean {
    return this.match(path)?.path.definition.binaryBody ?? false;
  }

  help(path: string): { help: string; openapi: Record<string, unknown> } {
    const found = this.match(path);
    if (!found) throw new NotFoundError('unsupported path');
    const info = describe(found.path);
    return { help: renderHelp(info), openapi: { paths: { [info.openApiPath]: info } } };
  }

  describePaths(): readonly PathHelp[] {
    return this.compiled.map(describe);
  }

  /** The hooks passed at construction, for hosts that wrap a backend. */
  get lifecycle(): BackendHooks {
    return this.hooks;
  }
}

/** The response with Vault's warning about fields the path ignored. */
async function withUnknownWarning(pending: Promise<LogicalResponse | null>, unknown: readonly string[]): Promise<LogicalResponse> {
  const response = await pending;
  const warning = `Endpoint ignored these unrecognized parameters: [${unknown.join(' ')}]`;
  // A copy: a handler may hand out the same response object on every request.
  return { ...response, warnings: [...(response?.warnings ?? []), warning] };
}

function describe(path: CompiledPath): PathHelp {
  const def = path.definition;
  return {
    pattern: def.pattern,
    openApiPath: path.pattern.openApiPath(),
    synopsis: def.synopsis,
    description: def.description,
    unauthenticated: def.unauthenticated ?? false,
    sudo: def.sudo ?? false,
    ...(def.userLockout ? { userLockout: true } : {}),
    createSupported: Boolean(def.existenceCheck && def.operations.create),
    refusedFields: { ...(def.refusedFields ?? {}) },
    operations: Object.fromEntries(
      Object.entries(def.operations).map(([op, spec]) => [op, { summary: (spec as { summary: string }).summary }]),
    ),
    fields: Object.fromEntries(
      Object.entries(def.fields as FieldSpecs)
        .filter(([, spec]) => !spec.deprecated)
        .map(([name, spec]) => [
          name,
          {
            type: spec.type,
            description: spec.description,
            required: spec.required ?? false,
            inPath: path.pattern.params.includes(name),
            ...(spec.default !== undefined && !spec.sensitive ? { default: spec.default } : {}),
            ...(spec.allowedValues ? { allowedValues: [...spec.allowedValues] } : {}),
          },
        ]),
    ),
  };
}

/**
 * Two patterns are ambiguous when some path matches both with the same specificity: then the
 * winner would depend on declaration order.
 */
function assertUnambiguous(patterns: readonly PathPattern[]): void {
  for (let i = 0; i < patterns.length; i++) {
    for (let j = i + 1; j < patterns.length; j++) {
      const a = patterns[i]!;
      const b = patterns[j]!;
      if (a.specificity !== b.specificity) continue;
      const common = commonPath(a, b);
      if (common !== undefined) throw new Error(`paths "${a.source}" and "${b.source}" are ambiguous (both match "${common}")`);
    }
  }
}

/**
 * A path both patterns match, or undefined. Walks both patterns segment by segment at once over
 * the literals of either plus one word that is none of them, so it also finds overlaps that no
 * single pattern spells out (`:x/b` and `a/:y` both match `a/b`). Each candidate is confirmed
 * with the patterns' own matchers, with and without a trailing slash.
 */
function commonPath(a: PathPattern, b: PathPattern): string | undefined {
  const literals = new Set([...a.segments, ...b.segments].filter((s) => s.kind === 'literal').map((s) => s.text));
  let other = 'x';
  while (literals.has(other)) other += 'x';
  const words = [other, ...literals];
  const queue: { readonly at: readonly [number, number]; readonly path: readonly string[] }[] = [{ at: [0, 0], path: [] }];
  const seen = new Set(['0,0']);
  while (queue.length > 0) {
    const { at: [i, j], path } = queue.shift()!;
    if (accepts(a, i) && accepts(b, j)) {
      const text = path.join('/');
      for (const candidate of [text, `${text}/`]) if (a.match(candidate) && b.match(candidate)) return candidate;
    }
    for (const word of words) {
      for (const ni of stepsOf(a, i, word)) {
        for (const nj of stepsOf(b, j, word)) {
          if (seen.has(`${ni},${nj}`)) continue;
          seen.add(`${ni},${nj}`);
          queue.push({ at: [ni, nj], path: [...path, word] });
        }
      }
    }
  }
  return undefined;
}

/** Where a pattern can be after one more path segment, from having matched its first `i` segments. */
function stepsOf(pattern: PathPattern, i: number, word: string): number[] {
  const next: number[] = [];
  const segment = pattern.segments[i];
  if (segment && (segment.kind !== 'literal' || segment.text === word)) next.push(i + 1);
  // `:name+` and `:name*` take any number of further segments.
  const previous = pattern.segments[i - 1];
  if (previous && (previous.kind === 'multi' || previous.kind === 'rest')) next.push(i);
  return next;
}

function accepts(pattern: PathPattern, i: number): boolean {
  const n = pattern.segments.length;
  return i === n || (i === n - 1 && pattern.segments[i]!.kind === 'optional');
}
