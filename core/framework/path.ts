/**
 * A path definition: pattern with named segments, fields, an operation → handler map, an optional
 * existence check and help. Plugins describe each API path once with `definePath`; the handler's
 * input type is derived from the fields, so handlers never cast.
 */
import type { FieldSpecs, FieldValues } from './fields.js';
import type { LogicalRequest, LogicalResponse, Operation, RequestTarget } from './request.js';

export type Handler<F extends FieldSpecs> = (
  req: LogicalRequest,
  input: FieldValues<F>,
) => Promise<LogicalResponse | null>;

export interface OperationSpec<F extends FieldSpecs> {
  readonly handler: Handler<F>;
  /** One line for help and OpenAPI. */
  readonly summary: string;
}

export interface PathDefinition<F extends FieldSpecs = FieldSpecs> {
  /**
   * Segments separated by `/`: literals, `:name` (one segment), `:name?` (an optional last
   * segment), `:name*` (the rest of the path, slashes included). A trailing `/` marks a listing
   * path, matched with or without the slash.
   */
  readonly pattern: string;
  readonly fields: F;
  readonly operations: Partial<Record<Operation, OperationSpec<F>>>;
  /**
   * For POST/PUT: whether the target exists. If it does the operation is `update`, otherwise
   * `create`; without a check it is always `update`. Runs before authorization, so it sees the
   * request as `prepare` does (no `sudo` yet); receives the coerced input; may answer at once (what
   * it knows from a cache) or with a promise.
   */
  readonly existenceCheck?: (req: RequestTarget, input: FieldValues<F>) => boolean | Promise<boolean>;
  /**
   * Fields Vault defines on this path that Keywarden does not honour, each with the reason a
   * client reads. A request that sets one is refused with a 400 naming it, never run as if the
   * field had been honoured; one that sends it with a zero value (`false`, `""`, `0`, `[]`, null)
   * asks for nothing and passes without a warning. (Fields Vault does not know either are only
   * warned about, as Vault does.) Listed in help and in the OpenAPI document.
   */
  readonly refusedFields?: Readonly<Record<string, string>>;
  /**
   * The path keeps whatever fields it is sent (cubbyhole, key/value stores): none of them is
   * "unrecognized"; the handler reads them from `req.data`.
   */
  readonly freeFormData?: boolean;
  /** Reachable without a token (logins, health). */
  readonly unauthenticated?: boolean;
  /**
   * The path is a login under the mount's user lockout (`user_lockout_config`, see
   * docs/auth-methods.md): the user the request names (a username, a role ID), from its coerced
   * input before the handler runs, as Vault's alias lookahead finds it; undefined or "" when it
   * names none. The host refuses a locked user with a 403 before the handler runs, counts the
   * handler's InvalidCredentialsError against the user, and clears the count when a login succeeds.
   */
  readonly userLockout?: (input: FieldValues<F>) => string | undefined;
  /**
   * Needs a token, which is authenticated (bound CIDRs, uses) and spends a use like any other, but
   * no ACL rule on this path: the handler decides, from the caller's own ACL, what it may answer
   * (sys/internal/ui/mounts tells a token about a mount it may use). Where Vault serves such a path
   * unauthenticated and checks the token in the handler, it skips the token's bound CIDRs and uses.
   */
  readonly anyToken?: boolean;
  /**
   * Needs `sudo` in the caller's policy (root-protected). On an `unauthenticated` path nothing is
   * needed: a caller whose token's policy grants the operation with sudo there is authorized as on
   * any other path (one use of its token spent) and its handler sees `req.auth.sudo`; any other
   * caller is served as without it.
   */
  readonly sudo?: boolean;
  /** Served while the barrier is sealed (only the sys backend's init, unseal, status paths). */
  readonly allowedWhileSealed?: boolean;
  /**
   * A POST or PUT body is bytes, not fields: the HTTP layer leaves it unread and the handler reads
   * `req.bodyStream` (snapshot restore), only after the request was authorized. No size limit
   * applies to it; the handler bounds what it accepts.
   */
  readonly binaryBody?: boolean;
  readonly synopsis: string;
  readonly description: string;
}

/** Identity function that lets TypeScript infer the field types for the handlers. */
export function definePath<const F extends FieldSpecs>(definition: PathDefinition<F>): NoInfer<PathDefinition<F>> {
  return definition;
}

/** Erased form kept in a backend's path list. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPathDefinition = PathDefinition<any>;

interface Segment {
  readonly kind: 'literal' | 'param' | 'optional' | 'multi' | 'rest';
  readonly text: string;
}

const WEIGHT: Record<Segment['kind'], number> = { literal: 1000, param: 10, optional: 5, multi: 2, rest: 1 };

/**
 * A compiled pattern: matches a mount-relative path and extracts the named segments.
 * `:name+` spans one or more segments (shortest first) and may be followed by literals
 * (`mounts/:path+/tune`); `:name*` is the rest of the path and must be last.
 */
export class PathPattern {
  readonly segments: readonly Segment[];
  readonly listing: boolean;
  readonly params: readonly string[];
  /** Higher is more specific; used so that matching never depends on declaration order. */
  readonly specificity: number;
  private readonly regex: RegExp;

  constructor(readonly source: string) {
    this.listing = source.endsWith('/');
    const body = this.listing ? source.slice(0, -1) : source;
    const parts = body === '' ? [] : body.split('/');
    this.segments = parts.map((part, i): Segment => {
      const last = i === parts.length - 1;
      if (part.startsWith(':')) {
        const name = part.replace(/^:/, '').replace(/[?*+]$/, '');
        if (!/^\w+$/.test(name)) throw new Error(`pattern "${source}": bad parameter "${part}"`);
        if (part.endsWith('*')) {
          if (!last) throw new Error(`pattern "${source}": a rest segment must be last`);
          return { kind: 'rest', text: name };
        }
        if (part.endsWith('?')) {
          if (!last) throw new Error(`pattern "${source}": an optional segment must be last`);
          return { kind: 'optional', text: name };
        }
        if (part.endsWith('+')) return { kind: 'multi', text: name };
        return { kind: 'param', text: name };
      }
      if (!/^[A-Za-z0-9_.-]+$/.test(part)) throw new Error(`pattern "${source}": bad literal segment "${part}"`);
      return { kind: 'literal', text: part };
    });
    this.params = this.segments.filter((s) => s.kind !== 'literal').map((s) => s.text);
    this.specificity = this.segments.reduce((sum, s) => sum + WEIGHT[s.kind], this.listing ? 1 : 0);

    let re = '';
    this.segments.forEach((seg, i) => {
      const sep = i === 0 ? '' : '/';
      switch (seg.kind) {
        case 'literal':
          re += sep + seg.text.replace(/[.]/g, '\\.');
          break;
        case 'param':
          re += `${sep}([^/]+)`;
          break;
        case 'optional':
          re += i === 0 ? '([^/]+)?' : '(?:/([^/]+))?';
          break;
        case 'multi':
          re += `${sep}(.+?)`;
          break;
        case 'rest':
          re += `${sep}(.+)`;
          break;
      }
    });
    const tail = this.listing ? "/?" : "";
    this.regex = new RegExp(`^${re}${tail}$`, 's');
  }

  /** Returns the captured segments, or undefined when the path does not match. */
  match(path: string): Record<string, string> | undefined {
    const m = this.regex.exec(path);
    if (!m) return undefined;
    const captured: Record<string, string> = {};
    // One capture group per non-literal segment, in order (a literal may share a parameter's name: `role/:role`).
    const params = this.segments.filter((s) => s.kind !== 'literal');
    for (let i = 0; i < params.length; i++) {
      const value = m[i + 1];
      if (value === undefined) continue;
      const seg = params[i]!;
      // A single segment may not end in "." (Vault answers 404 for it); empty segments never match.
      if ((seg.kind === 'param' || seg.kind === 'optional') && value.endsWith('.')) return undefined;
      if (value.split('/').some((piece, idx, all) => piece === '' && !(seg.kind !== 'param' && idx === all.length - 1))) {
        return undefined;
      }
      captured[seg.text] = value;
    }
    return captured;
  }

  /** `{name}` placeholders for OpenAPI. */
  openApiPath(): string {
    const text = this.segments.map((s) => (s.kind === 'literal' ? s.text : `{${s.text}}`)).join('/');
    return this.listing ? `${text}/` : text;
  }
}
