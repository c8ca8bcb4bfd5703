/** `login`: authenticate and keep the token in the token helper file. */
import type { Command } from 'commander';
import { UsageError } from '../client.js';
import { saveToken } from '../token-file.js';
import { attempt, clientFor, formatOf, isWrapped, printResponse, withClientOptions, withFieldOption, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { cloudLoginBody } from '../cloud-login.js';
import { oidcLogin } from '../oidc-login.js';
import { credentialLogin, CREDENTIAL_METHODS, isCredentialMethod } from '../credential-login.js';

interface LoginOptions extends GlobalOptions {
  readonly method: string;
  readonly path?: string;
  /** False with -no-store (commander names a --no-X flag's value X). */
  readonly store: boolean;
  readonly print: boolean;
  readonly tokenOnly?: boolean;
}

/** The auth methods `login -method=` knows besides token, each at its own name's mount by default. */
const METHODS: readonly string[] = ['cloud', 'aws', 'oidc', 'jwt', 'kubernetes', ...CREDENTIAL_METHODS];

/**
 * The body of a JWT or Kubernetes login: `role` and `jwt`, the token asked for without echo when
 * it is not given (as the vault CLI does for kubernetes). The JWT method may do without a role
 * (its default_role); the Kubernetes method may not.
 */
async function tokenLoginBody(method: string, fields: Record<string, unknown>, ctx: CliContext): Promise<Record<string, unknown>> {
  for (const key of Object.keys(fields)) if (key !== 'role' && key !== 'jwt') throw new UsageError(`unknown login field "${key}" (known: role, jwt)`);
  if (method === 'kubernetes' && fields.role === undefined) throw new UsageError("'role' must be supplied");
  const jwt = fields.jwt ?? (await ctx.io.secret('JWT (will be hidden): '));
  if (!jwt) throw new UsageError("'jwt' not supplied, and no terminal to ask for it");
  return { ...(fields.role !== undefined ? { role: fields.role } : {}), jwt };
}

export function registerLogin(program: Command, ctx: CliContext): void {
  withFieldOption(
    withClientOptions(
      program
        .command('login')
        .description(
          'Log in with a token (login TOKEN) or an auth method: -method=cloud role=R [header_value=V] [region=…] (-method=aws for an aws mount); ' +
            '-method=oidc [role=R] [port=8250] [skip_browser=true]; -method=jwt [role=R] jwt=TOKEN; -method=kubernetes role=R [jwt=TOKEN]; ' +
            '-method=userpass username=U [password=P]; -method=approle role_id=R secret_id=S',
        )
        .argument('[args...]'),
    ),
  )
    .option('--method <method>', 'token, cloud, aws (the cloud method under Vault\'s name), oidc, jwt, kubernetes, userpass or approle', 'token')
    .option('--path <path>', 'mount path of the auth method (default: the method name)')
    .option('--no-store', 'do not keep the token in the token helper file')
    .option('--no-print', 'do not print the token (it is still stored)')
    .option('--token-only', 'print only the token and do not store it (-field=token -no-store)')
    .action(async (args: string[], given: LoginOptions) => {
      const opts: LoginOptions = given.tokenOnly ? { ...given, field: 'token', store: false } : given;
      if (!opts.store && !opts.print) throw new UsageError('-no-store and -no-print cannot be used together');
      const client = await clientFor(ctx, opts);
      let token: string;
      let body: unknown;
      if (opts.method === 'token') {
        if (opts.wrapTtl) throw new UsageError('-wrap-ttl wraps the token an auth method mints: use it with another -method');
        const typed = args[0] ?? (await ctx.io.secret('Token (will be hidden): '));
        if (!typed) throw new UsageError('no token given, and no terminal to ask for one');
        client.token = typed.trim();
        client.tokenSource = 'given to login';
        const res = await attempt('Error authenticating', () => client.read('auth/token/lookup-self'));
        const d = res.body.data;
        token = client.token;
        body = { auth: { client_token: token, accessor: d.accessor, policies: d.policies, token_policies: d.policies, identity_policies: d.identity_policies, metadata: d.meta, orphan: d.orphan, entity_id: d.entity_id, lease_duration: d.ttl, renewable: d.renewable } };
      } else if (METHODS.includes(opts.method)) {
        const fields = await parseKeyValues(args, ctx.io);
        const mount = (opts.path ?? opts.method).replace(/^\/+|\/+$/g, '').replace(/^auth\//, '');
        client.token = undefined;
        // A userpass password is asked for before the request, without echo, when it is not given.
        const credential = isCredentialMethod(opts.method) ? await credentialLogin(opts.method, mount, fields, ctx.io) : undefined;
        const res = await attempt('Error authenticating', async () => {
          if (credential) return client.write(credential.path, credential.body);
          if (opts.method === 'oidc') return oidcLogin(client, mount, fields, ctx.io);
          const loginBody = opts.method === 'cloud' || opts.method === 'aws' ? await cloudLoginBody(fields, ctx.env) : await tokenLoginBody(opts.method, fields, ctx);
          return client.write(`auth/${mount}/login`, loginBody);
        });
        // A wrapped login is for someone else to unwrap: printed, never stored (as vault).
        if (isWrapped(res.body)) return printResponse(ctx, opts, res.body);
        token = res.body.auth.client_token as string;
        body = res.body;
      } else {
        throw new UsageError(`unknown login method "${opts.method}": use token, ${METHODS.join(', ')}`);
      }

      let stored: string | undefined;
      if (opts.store) {
        stored = await saveToken(ctx.env, token);
        for (const name of ['KEYWARDEN_TOKEN', 'VAULT_TOKEN']) {
          if (ctx.env[name]) ctx.io.err(`WARNING! The ${name} environment variable is set! It takes precedence over the stored token; unset it or update its value.\n\n`);
        }
      } else if (!opts.tokenOnly) {
        ctx.io.err('The token was not stored in the token helper file. Set the VAULT_TOKEN environment variable or pass the token below with each request.\n\n');
      }
      if (!opts.print) return;
      if (stored && !opts.field && formatOf(opts) === 'table') ctx.io.out(`Success! You are now authenticated. The token is kept in ${stored}.\n\n`);
      printResponse(ctx, opts, body);
    });
}
