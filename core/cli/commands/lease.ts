/** `lease lookup|renew|revoke` (through sys/leases/*, as the vault CLI does). */
import type { Command } from 'commander';
import { CommandError } from '../client.js';
import { attempt, clientFor, printResponse, withClientOptions, withFieldOption, type CliContext, type GlobalOptions } from '../context.js';

interface RevokeOptions extends GlobalOptions {
  readonly prefix?: boolean;
  readonly force?: boolean;
  readonly sync?: boolean | string;
}

export function registerLease(program: Command, ctx: CliContext): void {
  const lease = program.command('lease').description('Look up, renew and revoke leases');

  withFieldOption(withClientOptions(lease.command('lookup').description('Print a lease: its issue and expiry times and TTL').argument('<lease_id>'))).action(
    async (id: string, opts: GlobalOptions) => {
      const leaseId = id.trim();
      const res = await attempt(`error looking up lease id ${leaseId}`, async () => (await clientFor(ctx, opts)).write('sys/leases/lookup', { lease_id: leaseId }));
      printResponse(ctx, opts, res.body);
    },
  );

  withFieldOption(withClientOptions(lease.command('renew').description('Renew a lease').argument('<lease_id>')))
    .option('--increment <duration>', 'the TTL asked for')
    .action(async (id: string, opts: GlobalOptions & { increment?: string }) => {
      const leaseId = id.trim();
      const body = { lease_id: leaseId, ...(opts.increment ? { increment: opts.increment } : {}) };
      const res = await attempt(`Error renewing ${leaseId}`, async () => (await clientFor(ctx, opts)).write('sys/leases/renew', body));
      printResponse(ctx, opts, res.body);
    });

  withClientOptions(lease.command('revoke').description('Revoke a lease, or with -prefix every lease under a prefix').argument('<lease_id_or_prefix>'))
    .option('--prefix', 'revoke every lease under the prefix (auth/<mount>/ for every token from that mount)')
    .option('--force', 'with -prefix: revoke even if a backend fails to (needs -prefix)')
    .option('--sync [bool]', 'wait for the revocation (the default); -sync=false lets the server queue it', true)
    .action(async (id: string, opts: RevokeOptions) => {
      if (opts.force && !opts.prefix) throw new CommandError('Specifying -force requires also specifying -prefix', 1);
      const sync = opts.sync !== false && opts.sync !== 'false';
      const leaseId = id.trim();
      const inPath = leaseId.split('/').map(encodeURIComponent).join('/');
      const what = opts.force ? `Error force revoking leases with prefix ${leaseId}` : opts.prefix ? `Error revoking leases with prefix ${leaseId}` : `Error revoking lease ${leaseId}`;
      if (opts.force) ctx.io.err('Warning! Force-removing leases can cause Keywarden to become out of sync with secret engines!\n');
      await attempt(what, async () => {
        const client = await clientFor(ctx, opts);
        if (opts.force) return client.write(`sys/leases/revoke-force/${inPath}`);
        if (opts.prefix) return client.write(`sys/leases/revoke-prefix/${inPath}`, { sync });
        return client.write('sys/leases/revoke', { lease_id: leaseId, sync });
      });
      if (opts.force) ctx.io.out(`Success! Force revoked any leases with prefix: ${leaseId}\n`);
      else if (!sync) ctx.io.out('All revocation operations queued successfully!\n');
      else ctx.io.out(opts.prefix ? `Success! Revoked any leases with prefix: ${leaseId}\n` : `Success! Revoked lease: ${leaseId}\n`);
    });
}
