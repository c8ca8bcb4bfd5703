/** `policy write|read|list|delete` (through sys/policies/acl, as the vault CLI does). */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../client.js';
import { attempt, clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { renderData, renderList } from '../output.js';

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
      await attempt('Error uploading policy', async () => (await clientFor(ctx, opts)).write(`sys/policies/acl/${encodeURIComponent(name)}`, { policy: text }));
      ctx.io.out(`Success! Uploaded policy: ${name}\n`);
    },
  );

  withClientOptions(policy.command('read').description('Print a policy').argument('<name>')).action(async (name: string, opts: GlobalOptions) => {
    const res = await attempt(`Error reading policy named ${name}`, async () => (await clientFor(ctx, opts)).read(`sys/policies/acl/${encodeURIComponent(name)}`));
    const rules = String(res.body.data.policy);
    ctx.io.out(renderData(formatOf(opts), { policy: rules }, () => `${rules.trim()}\n`));
  });

  withClientOptions(policy.command('list').description('List policies')).action(async (opts: GlobalOptions) => {
    const res = await attempt('Error listing policies', async () => (await clientFor(ctx, opts)).list('sys/policies/acl'));
    const format = formatOf(opts);
    // Unlike `vault list`, `vault policy list` prints the bare names, without a Keys header.
    ctx.io.out(format === 'table' ? (res.body.data.keys as string[]).map((k) => `${k}\n`).join('') : renderList(format, res.body));
  });

  withClientOptions(policy.command('delete').description('Delete a policy').argument('<name>')).action(async (name: string, opts: GlobalOptions) => {
    await attempt('Error deleting', async () => (await clientFor(ctx, opts)).delete(`sys/policies/acl/${encodeURIComponent(name)}`));
    ctx.io.out(`Success! Deleted policy: ${name}\n`);
  });
}
