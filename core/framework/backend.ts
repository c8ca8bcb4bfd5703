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
import type { AuthResult, LogicalRequest, LogicalResponse, Operation } from './request.js';
import { renderHelp, type PathHelp } from './help.js';
import { refuseUnhonoured } from './refused-fields.js';

/** A request matched to a path and an operation, ready to be authorized and run. */
export interface PreparedRequest {
  readonly operation: Operation;
  readonly pattern: string;
  readonly sudo: boolean;
  /** Any authenticated token may run it; the handler authorizes (PathDefinition.anyToken). */
  readonly anyToken?: boolean;
  /** A login under user lockout: the user it names (PathDefinition.userLockout). */
  readonly lockoutUser?: string;
  execute(): Promise<LogicalResponse | null>;
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
   * Another node of an HA cluster changed `key` (relative to this mount's storage): drop whatever
   * is cached from it. Synchronous, so nothing can read the stale copy once the host has called it.
   */
  invalidate?(key: string): void;
}

export interface Backend extends BackendHooks {
  readonly description: string;
  /**
   * Matches the path, applies the existence check and picks the operation; a backend may answer
   * at once (the pipeline then spends no turn of the event loop on it) or with a promise.
   */
  prepare(req: LogicalRequest): PreparedRequest | Promise<PreparedRequest>;
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
}

export interface FrameworkBackendOptions extends BackendHooks {
  readonly description: string;
  readonly paths: readonly AnyPathDefinition[];
}

export class FrameworkBackend implements Backend {
  readonly description: string;
  private readonly compiled: readonly CompiledPath[];
  private readonly hooks: BackendHooks;

  constructor(options: FrameworkBackendOptions) {
    this.description = options.description;
    this.compiled = options.paths.map((definition) => {
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
      if (Object.keys(definition.operations).length === 0) throw new Error(`path "${definition.pattern}": no operations`);
      return { definition, pattern, fields: compileFields(definition.fields) };
    });
    assertUnambiguous(this.compiled.map((c) => c.pattern));
    this.hooks = options;
    if (options.initialize) this.initialize = () => options.initialize!();
    if (options.periodic) this.periodic = () => options.periodic!();
    if (options.cleanup) this.cleanup = () => options.cleanup!();
    if (options.renew) this.renew = (req, auth) => options.renew!(req, auth);
    if (options.invalidate) this.invalidate = (key) => options.invalidate!(key);
  }

  initialize?(): Promise<void>;
  periodic?(): Promise<void>;
  cleanup?(): Promise<void>;
  renew?(req: LogicalRequest, auth: AuthResult): Promise<AuthResult>;
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
  prepare(req: LogicalRequest): PreparedRequest | Promise<PreparedRequest> {
    const found = this.match(req.path);
    if (!found) throw new NotFoundError('unsupported path');
    const { path, params } = found;
    const def = path.definition;

    // Path segments win over body fields of the same name, as in Vault. Invalid input is answered
    // only once the caller is authorized (`execute` throws it), so a caller without access learns
    // nothing about a path's fields from a 400: as in Vault, permission is checked first. No
    // existence check can run on invalid input; the request's own operation is authorized then.
    // Refused fields are checked before the schema, so a refused field is what the answer names
    // even when others are missing.
    const refused = def.refusedFields;
    let parsed: ReturnType<CompiledFields['parse']>;
    try {
      if (refused) refuseUnhonoured(refused, req.data);
      parsed = path.fields.parse(req.data, params);
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      if (!def.operations[req.operation] && !(req.operation === 'update' && def.operations.create)) throw new UnsupportedOperationError();
      return { operation: req.operation, pattern: def.pattern, sudo: def.sudo ?? false, anyToken: def.anyToken ?? false, execute: () => Promise.reject(err) };
    }
    const input = parsed.input as FieldValues<FieldSpecs>;
    // A refused field that got this far asks for nothing: Vault knows it, so it is not "unrecognized".
    const unknown = def.freeFormData ? [] : refused ? parsed.unknown.filter((name) => !Object.hasOwn(refused, name)) : parsed.unknown;
    const existenceCheck = def.existenceCheck;
    if (req.operation === 'update' && existenceCheck) {
      // A check may answer at once (a cached key) or read storage first.
      const exists = existenceCheck(req, input);
      if (exists instanceof Promise) return exists.then((found) => preparedFor(def, req, found ? 'update' : 'create', input, unknown));
      return preparedFor(def, req, exists ? 'update' : 'create', input, unknown);
    }
    return preparedFor(def, req, req.operation, input, unknown);
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

/** The request, its operation settled, ready to run its handler. */
function preparedFor(def: AnyPathDefinition, req: LogicalRequest, operation: Operation, input: FieldValues<FieldSpecs>, unknown: readonly string[]): PreparedRequest {
  const spec = def.operations[operation];
  if (!spec) throw new UnsupportedOperationError();
  req.operation = operation;
  const lockoutUser = def.userLockout && (operation === 'update' || operation === 'create') ? def.userLockout(input) : undefined;
  return {
    operation,
    pattern: def.pattern,
    sudo: def.sudo ?? false,
    anyToken: def.anyToken ?? false,
    ...(lockoutUser ? { lockoutUser } : {}),
    // Without a warning to add, the handler's own promise is the answer: no wrapper around it.
    execute: unknown.length === 0 ? () => spec.handler(req, input) : async () => {
      const response = await spec.handler(req, input);
      const warning = `Endpoint ignored these unrecognized parameters: [${unknown.join(' ')}]`;
      // A copy: a handler may hand out the same response object on every request.
      return { ...response, warnings: [...(response?.warnings ?? []), warning] };
    },
  };
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
