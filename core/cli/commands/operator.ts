/** `operator init|unseal|seal|step-down` and `status` (rekey, generate-root and rotate in their own files). */
import type { Command } from 'commander';
import { UsageError, type ApiClient } from '../client.js';
import { attempt, clientFor, commandGroup, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { renderData, table } from '../output.js';
import { readPublicKeyFile, readPublicKeyFiles } from '../operator-shares.js';
import { registerOperatorRekey } from './operator-rekey.js';
import { registerOperatorGenerateRoot } from './operator-generate-root.js';
import { registerOperatorRotate } from './operator-rotate.js';
import { registerOperatorSnapshot } from './operator-snapshot.js';

type Json = Record<string, any>;

/** The table `vault status` prints: seal state, then where the node stands in HA. */
function sealRows(s: Json, leader: Json): [string, unknown][] {
  const ha = leader.ha_enabled === true;
  const rows: [string, unknown][] = [
    ['Seal Type', s.type],
    ['Initialized', s.initialized],
    ['Sealed', s.sealed],
    ['Total Shares', s.n],
    ['Threshold', s.t],
  ];
  if (s.sealed) rows.push(['Unseal Progress', `${s.progress}/${s.t}`], ['Unseal Nonce', s.nonce]);
  if (s.migration) rows.push(['Seal Migration in Progress', true]);
  rows.push(['Version', s.version], ['Build Date', s.build_date], ['Storage Type', s.storage_type]);
  if (s.cluster_name && s.cluster_id) rows.push(['Cluster Name', s.cluster_name], ['Cluster ID', s.cluster_id]);
  rows.push(['HA Enabled', ha]);
  if (ha && !s.sealed) {
    rows.push(['HA Cluster', leader.leader_cluster_address], ['HA Mode', leader.is_self ? 'active' : 'standby']);
    if (leader.is_self && leader.active_time && leader.active_time !== NEVER) rows.push(['Active Since', leader.active_time]);
    if (!leader.is_self) rows.push(['Active Node Address', leader.leader_address || '<none>']);
  }
  return rows;
}

/** Go's zero time, which sys/leader answers for "never active". */
const NEVER = '0001-01-01T00:00:00Z';

/** What `vault status -format=json` prints: the seal status with sys/leader's fields, the empty ones left out. */
function sealStatusOutput(s: Json, leader: Json): Json {
  return {
    ...s,
    ha_enabled: leader.ha_enabled === true,
    ...(leader.is_self ? { is_self: true } : {}),
    active_time: leader.active_time ?? NEVER,
    ...(leader.leader_address ? { leader_address: leader.leader_address } : {}),
    ...(leader.leader_cluster_address ? { leader_cluster_address: leader.leader_cluster_address } : {}),
  };
}

/**
 * Prints a seal status as `vault status` and `vault operator unseal` do, with sys/leader's view.
 * @throws CommandError (exit 1, as vault) when sys/leader cannot be read.
 */
async function printSealStatus(ctx: CliContext, opts: GlobalOptions, client: ApiClient, seal: Json): Promise<void> {
  const leader = (await attempt('Error checking leader status', () => client.read('sys/leader'), 1)).body as Json;
  ctx.io.out(renderData(formatOf(opts), sealStatusOutput(seal, leader), () => table(sealRows(seal, leader))));
}

interface InitOptions extends GlobalOptions {
  keyShares: string;
  keyThreshold: string;
  pgpKeys?: string;
  rootTokenPgpKey?: string;
  recoveryShares: string;
  recoveryThreshold: string;
  recoveryPgpKeys?: string;
}

/** `operator init` against a server with an auto seal: recovery key shares instead of unseal key shares, as vault's. */
async function initAuto(ctx: CliContext, opts: InitOptions, client: ApiClient, type: string, rootKey: string | undefined): Promise<void> {
  const shares = Number(opts.recoveryShares);
  const threshold = Number(opts.recoveryThreshold);
  if (!Number.isInteger(shares) || !Number.isInteger(threshold)) throw new UsageError('-recovery-shares and -recovery-threshold must be integers');
  const pgpKeys = opts.recoveryPgpKeys ? await readPublicKeyFiles(opts.recoveryPgpKeys) : [];
  if (pgpKeys.length > 0 && pgpKeys.length !== shares) {
    throw new UsageError(`-recovery-pgp-keys names ${pgpKeys.length} keys: it needs one for each of the ${shares} recovery key shares`);
  }
  // -recovery-shares=0 alone means none at all (OpenBao's fix: https://github.com/openbao/openbao/pull/1754).
  const t = shares === 0 ? 0 : threshold;
  const request = {
    recovery_shares: shares,
    recovery_threshold: t,
    ...(pgpKeys.length > 0 ? { recovery_pgp_keys: pgpKeys } : {}),
    ...(rootKey ? { root_token_pgp_key: rootKey } : {}),
  };
  const res = await attempt('Error initializing', () => client.write('sys/init', request));
  const body = res.body as { recovery_keys?: string[]; recovery_keys_base64?: string[]; root_token: string };
  const keysB64 = body.recovery_keys_base64 ?? [];
  const output = {
    unseal_keys_b64: [],
    unseal_keys_hex: [],
    unseal_shares: 1,
    unseal_threshold: 1,
    recovery_keys_b64: keysB64,
    recovery_keys_hex: body.recovery_keys ?? [],
    recovery_keys_shares: shares,
    recovery_keys_threshold: t,
    root_token: body.root_token,
  };
  const text = () =>
    (keysB64.length > 0 ? `${keysB64.map((k, i) => `Recovery Key ${i + 1}: ${k}`).join('\n')}\n\n` : '') +
    `Initial Root Token: ${body.root_token}\n\n` +
    `The server is initialized with the ${type} seal: it unseals itself at every start, and there are no unseal key shares to keep.\n` +
    (shares > 0
      ? `\nThe recovery key is split into ${shares} key shares with a key threshold of ${t}. Recovery shares authorize root token ` +
        'generation and recovery rekey; they cannot unseal or decrypt anything: if the seal is lost, so is the data.\n'
      : '\nThere are no recovery key shares: create them with "keywarden operator rekey -init -target=recovery" (needs a token with sudo) before you need them.\n');
  ctx.io.out(renderData(formatOf(opts), output, text));
}

export function registerOperator(program: Command, ctx: CliContext, setExit: (code: number) => void): void {
  const operator = commandGroup(program, 'operator', 'Operate the server: init, unseal, seal, step-down, rotate');

  withClientOptions(operator.command('init').description('Initialize the server: create the unseal key shares (or, with an auto seal, the recovery key shares) and the root token'))
    .option('--key-shares <n>', 'number of key shares', '5')
    .option('--key-threshold <n>', 'number of shares needed to unseal', '3')
    .option('--pgp-keys <files>', 'comma-separated OpenPGP public key files, one per share: each share is encrypted to its key')
    .option('--root-token-pgp-key <file>', 'OpenPGP public key file: the root token is encrypted to it')
    .option('--recovery-shares <n>', 'with an auto seal: number of recovery key shares (0: none until "operator rekey -init -target=recovery")', '5')
    .option('--recovery-threshold <n>', 'with an auto seal: number of recovery shares needed to authorize root generation and recovery rekey', '3')
    .option('--recovery-pgp-keys <files>', 'with an auto seal: comma-separated OpenPGP public key files, one per recovery share')
    .action(async (opts: InitOptions) => {
      const shares = Number(opts.keyShares);
      const threshold = Number(opts.keyThreshold);
      if (!Number.isInteger(shares) || !Number.isInteger(threshold)) throw new UsageError('-key-shares and -key-threshold must be integers');
      const pgpKeys = opts.pgpKeys ? await readPublicKeyFiles(opts.pgpKeys) : [];
      if (pgpKeys.length > 0 && pgpKeys.length !== shares) throw new UsageError(`-pgp-keys names ${pgpKeys.length} keys: it needs one for each of the ${shares} key shares`);
      const rootKey = opts.rootTokenPgpKey ? await readPublicKeyFile(opts.rootTokenPgpKey) : undefined;
      // As Vault's CLI: the server's seal decides whether there are unseal key shares at all.
      const client = await clientFor(ctx, opts);
      const status = (await attempt('Error initializing', () => client.read('sys/seal-status'))).body as Json;
      if (status.recovery_seal === true) {
        if (pgpKeys.length > 0) throw new UsageError(`-pgp-keys does not apply: the ${String(status.type)} seal wraps the root key, there are no unseal key shares (see -recovery-pgp-keys)`);
        return initAuto(ctx, opts, client, String(status.type), rootKey);
      }
      if (opts.recoveryPgpKeys) throw new UsageError('-recovery-pgp-keys applies only with an auto seal: this server has a Shamir seal');
      const request = {
        secret_shares: shares,
        secret_threshold: threshold,
        ...(pgpKeys.length > 0 ? { pgp_keys: pgpKeys } : {}),
        ...(rootKey ? { root_token_pgp_key: rootKey } : {}),
      };
      const res = await attempt('Error initializing', () => client.write('sys/init', request));
      const body = res.body as { keys: string[]; keys_base64: string[]; root_token: string };
      const output = {
        unseal_keys_b64: body.keys_base64,
        unseal_keys_hex: body.keys,
        unseal_shares: shares,
        unseal_threshold: threshold,
        recovery_keys_b64: [],
        recovery_keys_hex: [],
        recovery_keys_shares: 0,
        recovery_keys_threshold: 0,
        root_token: body.root_token,
      };
      ctx.io.out(
        renderData(
          formatOf(opts),
          output,
          () =>
            `${body.keys_base64.map((k, i) => `Unseal Key ${i + 1}: ${k}`).join('\n')}\n\nInitial Root Token: ${body.root_token}\n\n` +
            `The server is initialized with ${shares} key shares and a key threshold of ${threshold}. ` +
            `Provide ${threshold} of these keys to unseal it after every start. Keep them apart and safe: ` +
            'without them the data cannot be recovered.\n',
        ),
      );
    });

  withClientOptions(
    operator
      .command('unseal')
      .description('Submit one unseal key share: given, "-" to read it from standard input, or omitted (prompted for without echo on a terminal, else read from standard input)')
      .argument('[key]'),
  )
    .option('--reset', 'discard the shares submitted so far')
    .option('--migrate', 'move a Shamir store to the seal stanza the server now has, with these shares (seal migration)')
    .action(async (key: string | undefined, opts: GlobalOptions & { reset?: boolean; migrate?: boolean }) => {
      let body: Record<string, unknown>;
      if (opts.reset) {
        body = { reset: true };
      } else {
        // As vault's prompt, which reads a piped key (echo KEY | vault operator unseal); a key on
        // standard input stays out of the shell's history and the process list.
        const share = key === '-' ? await ctx.io.stdin() : (key ?? (await ctx.io.secret('Unseal Key (will be hidden): ')) ?? (await ctx.io.stdin()));
        if (!share.trim()) throw new UsageError('no unseal key given: pass it as an argument, or "-" and the key on standard input, or run in a terminal to be asked for it');
        body = { key: share.trim(), ...(opts.migrate ? { migrate: true } : {}) };
      }
      const client = await clientFor(ctx, opts);
      const res = await attempt('Error unsealing', () => client.write('sys/unseal', body));
      await printSealStatus(ctx, opts, client, res.body);
    });

  registerOperatorRekey(operator, ctx);
  registerOperatorGenerateRoot(operator, ctx);
  registerOperatorRotate(operator, ctx);
  registerOperatorSnapshot(operator, ctx);

  withClientOptions(operator.command('seal').description('Seal the server')).action(async (opts: GlobalOptions) => {
    await attempt('Error sealing', async () => (await clientFor(ctx, opts)).write('sys/seal'));
    ctx.io.out('Success! Keywarden is sealed.\n');
  });

  withClientOptions(operator.command('step-down').description('Make the active node give up its role so another node takes it (needs sudo)')).action(
    async (opts: GlobalOptions) => {
      const client = await clientFor(ctx, opts);
      await attempt('Error stepping down', () => client.write('sys/step-down'));
      ctx.io.out(`Success! Stepped down: ${client.address}\n`);
    },
  );

  withClientOptions(program.command('status').description('Seal status (exit code 2 when sealed, 1 on error)')).action(async (opts: GlobalOptions) => {
    // Every failure exits 1 here: vault keeps 2 for "sealed".
    const client = await attempt('Error', () => clientFor(ctx, opts), 1);
    const res = await attempt('Error checking seal status', () => client.read('sys/seal-status'), 1);
    await printSealStatus(ctx, opts, client, res.body);
    if (res.body.sealed) setExit(2);
  });
}
