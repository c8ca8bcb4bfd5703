/** `token create|lookup|renew|revoke|capabilities`. */
import type { Command } from 'commander';
import { CommandError } from '../client.js';
import { attempt, clientFor, formatOf, printResponse, withClientOptions, withFieldOption, type CliContext, type GlobalOptions } from '../context.js';
import { renderData } from '../output.js';

interface CreateOptions extends GlobalOptions {
  readonly policy?: string[];
  readonly ttl?: string;
  readonly explicitMaxTtl?: string;
  readonly period?: string;
  readonly orphan?: boolean;
  readonly type?: string;
  readonly displayName?: string;
  readonly useLimit?: string;
  readonly renewable?: string;
  readonly role?: string;
  readonly metadata?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerToken(program: Command, ctx: CliContext): void {
  const token = program.command('token').description('Create, look up, renew and revoke tokens; show their capabilities');

  withFieldOption(withClientOptions(token.command('create').description('Create a token (a child of the current one unless -orphan)')))
    .option('--policy <name>', 'a policy (repeatable)', collect)
    .option('--ttl <duration>', 'initial TTL')
    .option('--explicit-max-ttl <duration>', 'hard limit on the lifetime')
    .option('--period <duration>', 'make a periodic token')
    .option('--orphan', 'create an orphan token')
    .option('--type <type>', 'service or batch')
    .option('--display-name <name>', 'display name')
    .option('--use-limit <n>', 'number of uses')
    .option('--renewable <bool>', 'whether the token can be renewed')
    .option('--role <name>', 'create against a token role')
    .option('--metadata <k=v>', 'metadata (repeatable)', collect)
    .action(async (opts: CreateOptions) => {
      const meta = Object.fromEntries((opts.metadata ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
      const body = {
        ...(opts.policy ? { policies: opts.policy } : {}),
        ...(opts.ttl ? { ttl: opts.ttl } : {}),
        ...(opts.explicitMaxTtl ? { explicit_max_ttl: opts.explicitMaxTtl } : {}),
        ...(opts.period ? { period: opts.period } : {}),
        ...(opts.type ? { type: opts.type } : {}),
        ...(opts.displayName ? { display_name: opts.displayName } : {}),
        ...(opts.useLimit ? { num_uses: opts.useLimit } : {}),
        ...(opts.renewable !== undefined ? { renewable: opts.renewable } : {}),
        ...(Object.keys(meta).length ? { meta } : {}),
      };
      const path = opts.role ? `auth/token/create/${opts.role}` : opts.orphan ? 'auth/token/create-orphan' : 'auth/token/create';
      const res = await attempt('Error creating token', async () => (await clientFor(ctx, opts)).write(path, body));
      printResponse(ctx, opts, res.body);
    });

  withFieldOption(withClientOptions(token.command('lookup').description('Look up a token (the current one when omitted)').argument('[token]')))
    .option('--accessor', 'the argument is an accessor')
    .action(async (value: string | undefined, opts: GlobalOptions & { accessor?: boolean }) => {
      const res = await attempt('Error looking up token', async () => {
        const client = await clientFor(ctx, opts);
        if (value === undefined) return client.read('auth/token/lookup-self');
        return opts.accessor ? client.write('auth/token/lookup-accessor', { accessor: value }) : client.write('auth/token/lookup', { token: value });
      });
      printResponse(ctx, opts, res.body);
    });

  withFieldOption(withClientOptions(token.command('renew').description('Renew a token (the current one when omitted)').argument('[token]')))
    .option('--increment <duration>', 'the TTL asked for')
    .option('--accessor', 'the argument is an accessor')
    .action(async (value: string | undefined, opts: GlobalOptions & { increment?: string; accessor?: boolean }) => {
      const increment = opts.increment ? { increment: opts.increment } : {};
      const res = await attempt('Error renewing token', async () => {
        const client = await clientFor(ctx, opts);
        if (value === undefined) return client.write('auth/token/renew-self', increment);
        return opts.accessor ? client.write('auth/token/renew-accessor', { accessor: value, ...increment }) : client.write('auth/token/renew', { token: value, ...increment });
      });
      printResponse(ctx, opts, res.body);
    });

  withClientOptions(token.command('revoke').description('Revoke a token and its children').argument('[token]'))
    .option('--self', 'revoke the current token')
    .option('--accessor', 'the argument is an accessor')
    .option('--mode <mode>', 'orphan: revoke only this token, its children become orphans')
    .action(async (value: string | undefined, opts: GlobalOptions & { self?: boolean; accessor?: boolean; mode?: string }) => {
      await attempt('Error revoking token', async () => {
        const client = await clientFor(ctx, opts);
        if (opts.self || value === undefined) return client.write('auth/token/revoke-self');
        if (opts.accessor) return client.write('auth/token/revoke-accessor', { accessor: value });
        if (opts.mode === 'orphan') return client.write('auth/token/revoke-orphan', { token: value });
        return client.write('auth/token/revoke', { token: value });
      });
      ctx.io.out('Success! Revoked token (if it existed)\n');
    });

  withClientOptions(
    token
      .command('capabilities')
      .description("Print a token's capabilities on a path: capabilities [TOKEN] PATH (the current token when TOKEN is omitted)")
      .argument('<token-or-path>')
      .argument('[path]'),
  ).action(async (first: string, second: string | undefined, opts: GlobalOptions) => {
    const [other, path] = second === undefined ? [undefined, first] : [first, second];
    const res = await attempt('Error listing capabilities', async () => {
      const client = await clientFor(ctx, opts);
      return other === undefined ? client.write('sys/capabilities-self', { paths: [path] }) : client.write('sys/capabilities', { token: other, paths: [path] });
    });
    const data = (res.body?.data ?? {}) as Record<string, unknown>;
    const capabilities = data[path] ?? data.capabilities;
    if (!Array.isArray(capabilities)) throw new CommandError('No capabilities found', 1);
    ctx.io.out(renderData(formatOf(opts), capabilities, () => `${[...capabilities].sort().join(', ')}\n`));
  });
}
