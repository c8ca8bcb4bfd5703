/** `login`: authenticate and keep the token in the token helper file. */
import type { Command } from 'commander';
import { saveToken, UsageError } from '../client.js';
import { clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { render } from '../output.js';
import { cloudLoginBody } from '../cloud-login.js';

interface LoginOptions extends GlobalOptions {
  readonly method: string;
  readonly path?: string;
  readonly noStore?: boolean;
}

export function registerLogin(program: Command, ctx: CliContext): void {
  withClientOptions(
    program
      .command('login')
      .description('Log in with a token (login TOKEN) or an auth method (login -method=cloud role=R [header_value=V] [region=…])')
      .argument('[args...]'),
  )
    .option('--method <method>', 'token or cloud', 'token')
    .option('--path <path>', 'mount path of the auth method (default: the method name)')
    .option('--no-store', 'do not keep the token in the token helper file')
    .action(async (args: string[], opts: LoginOptions) => {
      const client = await clientFor(ctx, opts);
      let token: string;
      let body: unknown;
      if (opts.method === 'token') {
        const given = args[0] ?? (await ctx.io.secret('Token (will be hidden): '));
        if (!given) throw new UsageError('no token given, and no terminal to ask for one');
        client.token = given.trim();
        const res = await client.read('auth/token/lookup-self');
        token = client.token;
        body = { auth: { client_token: token, accessor: res.body.data.accessor, policies: res.body.data.policies, token_policies: res.body.data.policies, lease_duration: res.body.data.ttl, renewable: res.body.data.renewable, metadata: res.body.data.meta } };
      } else if (opts.method === 'cloud') {
        const fields = await parseKeyValues(args, ctx.io);
        const path = (opts.path ?? 'cloud').replace(/^\/+|\/+$/g, '').replace(/^auth\//, '');
        client.token = undefined;
        const res = await client.write(`auth/${path}/login`, await cloudLoginBody(fields, ctx.env));
        token = res.body.auth.client_token as string;
        body = res.body;
      } else {
        throw new UsageError(`unknown login method "${opts.method}": use token or cloud`);
      }
      if (opts.noStore !== false) {
        const file = await saveToken(ctx.env, token);
        if (formatOf(opts) === 'table') ctx.io.out(`Success! You are now authenticated. The token is kept in ${file}.\n\n`);
      }
      ctx.io.out(render(formatOf(opts), body));
    });
}
