/** `policy write|read|list|delete` (through sys/policies/acl, as the vault CLI does). */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../client.js';
import { clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { renderList } from '../output.js';

export function registerPolicy(program: Command, ctx: CliContext): void {
  const policy = program.command('policy').description('Manage ACL policies');

  withClientOptions(policy.command('write').description('Write a policy from a file (- for standard input)').argument('<name>').argument('<file>')).action(
    async (name: string, file: string, opts: GlobalOptions) => {
      let text: string;
      try {
        text = file === '-' ? await ctx.io.stdin() : await readFile(file, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      const client = await clientFor(ctx, opts);
      await client.write(`sys/policies/acl/${encodeURIComponent(name)}`, { policy: text });
      ctx.io.out(`Success! Uploaded policy: ${name}\n`);
    },
  );
  withClientOptions(policy.command('read').description('Print a policy').argument('<name>')).action(async (name: string, opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    const res = await client.read(`sys/policies/acl/${encodeURIComponent(name)}`);
    ctx.io.out(formatOf(opts) === 'json' ? `${JSON.stringify(res.body, null, 2)}\n` : `${String(res.body.data.policy).replace(/\n?$/, '\n')}`);
  });
  withClientOptions(policy.command('list').description('List policies')).action(async (opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    const res = await client.list('sys/policies/acl');
    ctx.io.out(formatOf(opts) === 'json' ? renderList('json', res.body) : `${(res.body.data.keys as string[]).join('\n')}\n`);
  });
  withClientOptions(policy.command('delete').description('Delete a policy').argument('<name>')).action(async (name: string, opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    await client.delete(`sys/policies/acl/${encodeURIComponent(name)}`);
    ctx.io.out(`Success! Deleted policy: ${name}\n`);
  });
}
