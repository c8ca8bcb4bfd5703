/** `operator init|unseal|seal` and `status`. */
import type { Command } from 'commander';
import { UsageError } from '../client.js';
import { clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { table } from '../output.js';
import { registerOperatorRekey } from './operator-rekey.js';
import { registerOperatorGenerateRoot } from './operator-generate-root.js';

function sealRows(s: any, leader?: any): [string, unknown][] { // eslint-disable-line @typescript-eslint/no-explicit-any
  const ha = leader?.ha_enabled === true;
  return [
    ['Seal Type', s.type],
    ['Initialized', s.initialized],
    ['Sealed', s.sealed],
    ['Total Shares', s.n],
    ['Threshold', s.t],
    ...(s.sealed ? ([['Unseal Progress', `${s.progress}/${s.t}`], ['Unseal Nonce', s.nonce || 'n/a']] as [string, unknown][]) : []),
    ['Version', s.version],
    ['Storage Type', s.storage_type],
    ...(s.cluster_name ? ([['Cluster Name', s.cluster_name], ['Cluster ID', s.cluster_id]] as [string, unknown][]) : []),
    ['HA Enabled', ha],
    // As the vault CLI shows it: the node's role, and where the active node is.
    ...(ha && !s.sealed
      ? ([['HA Mode', leader.is_self ? 'active' : 'standby'], ['Active Node Address', leader.leader_address || '<none>']] as [string, unknown][])
      : []),
  ];
}

export function registerOperator(program: Command, ctx: CliContext, setExit: (code: number) => void): void {
  const operator = program.command('operator').description('Operate the server: init, unseal, seal');

  withClientOptions(operator.command('init').description('Initialize the server: create the unseal key shares and the root token'))
    .option('--key-shares <n>', 'number of key shares', '5')
    .option('--key-threshold <n>', 'number of shares needed to unseal', '3')
    .action(async (opts: GlobalOptions & { keyShares: string; keyThreshold: string }) => {
      const shares = Number(opts.keyShares);
      const threshold = Number(opts.keyThreshold);
      if (!Number.isInteger(shares) || !Number.isInteger(threshold)) throw new UsageError('-key-shares and -key-threshold must be integers');
      const client = await clientFor(ctx, opts);
      const res = await client.write('sys/init', { secret_shares: shares, secret_threshold: threshold });
      const body = res.body as { keys: string[]; keys_base64: string[]; root_token: string };
      if (formatOf(opts) === 'json') {
        ctx.io.out(
          `${JSON.stringify({ unseal_keys_b64: body.keys_base64, unseal_keys_hex: body.keys, unseal_shares: shares, unseal_threshold: threshold, recovery_keys_b64: [], recovery_keys_hex: [], recovery_keys_shares: 0, recovery_keys_threshold: 0, root_token: body.root_token }, null, 2)}\n`,
        );
        return;
      }
      const lines = body.keys_base64.map((k, i) => `Unseal Key ${i + 1}: ${k}`);
      ctx.io.out(
        `${lines.join('\n')}\n\nInitial Root Token: ${body.root_token}\n\n` +
          `The server is initialized with ${shares} key shares and a key threshold of ${threshold}. ` +
          `Provide ${threshold} of these keys to unseal it after every start. Keep them apart and safe: ` +
          'without them the data cannot be recovered.\n',
      );
    });

  withClientOptions(operator.command('unseal').description('Submit one unseal key share (prompted for, without echo, when omitted)').argument('[key]'))
    .option('--reset', 'discard the shares submitted so far')
    .action(async (key: string | undefined, opts: GlobalOptions & { reset?: boolean }) => {
      const client = await clientFor(ctx, opts);
      let body: Record<string, unknown>;
      if (opts.reset) {
        body = { reset: true };
      } else {
        const share = key ?? (await ctx.io.secret('Unseal Key (will be hidden): '));
        if (!share) throw new UsageError('no unseal key given, and no terminal to ask for one');
        body = { key: share.trim() };
      }
      const res = await client.write('sys/unseal', body);
      ctx.io.out(formatOf(opts) === 'json' ? `${JSON.stringify(res.body, null, 2)}\n` : table(sealRows(res.body)));
    });

  registerOperatorRekey(operator, ctx);
  registerOperatorGenerateRoot(operator, ctx);

  withClientOptions(operator.command('seal').description('Seal the server')).action(async (opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    await client.write('sys/seal');
    ctx.io.out('Success! Keywarden is sealed.\n');
  });

  withClientOptions(program.command('status').description('Seal status (exit code 2 when sealed)')).action(async (opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    const res = await client.read('sys/seal-status');
    // HA details come from sys/leader; a server too old or too broken to answer it is shown without them.
    const leader = await client.read('sys/leader').then((r) => r.body, () => undefined);
    const merged = leader ? { ...res.body, ha_enabled: leader.ha_enabled, ...(leader.ha_enabled ? { is_self: leader.is_self, leader_address: leader.leader_address } : {}) } : res.body;
    ctx.io.out(formatOf(opts) === 'json' ? `${JSON.stringify(merged, null, 2)}\n` : table(sealRows(res.body, leader)));
    if (res.body.sealed) setExit(2);
  });
}
