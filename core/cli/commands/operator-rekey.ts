/**
 * `operator rekey`: new unseal key shares from a threshold of the current ones, as `vault operator
 * rekey`; with `-target=recovery`, new recovery key shares (sys/rekey-recovery-key/*).
 */
import type { Command } from 'commander';
import { UsageError, type ApiClient } from '../client.js';
import { clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { readPublicKeyFiles, shareToSubmit } from '../operator-shares.js';
import { render, table, type OutputFormat } from '../output.js';

interface RekeyOptions extends GlobalOptions {
  readonly init?: boolean;
  readonly cancel?: boolean;
  readonly status?: boolean;
  readonly verify?: boolean;
  readonly keyShares: string;
  readonly keyThreshold: string;
  readonly pgpKeys?: string;
  readonly backup?: boolean;
  readonly backupRetrieve?: boolean;
  readonly backupDelete?: boolean;
  readonly nonce?: string;
  readonly target: string;
}

/** The endpoints of each `-target`, as vault's CLI calls them. */
interface Paths {
  readonly init: string;
  readonly update: string;
  readonly verify: string;
  readonly backup: string;
  /** What the shares are called in messages. */
  readonly keys: string;
}

const TARGETS: Readonly<Record<string, Paths>> = {
  barrier: { init: 'sys/rekey/init', update: 'sys/rekey/update', verify: 'sys/rekey/verify', backup: 'sys/rekey/backup', keys: 'unseal' },
  recovery: {
    init: 'sys/rekey-recovery-key/init',
    update: 'sys/rekey-recovery-key/update',
    verify: 'sys/rekey-recovery-key/verify',
    backup: 'sys/rekey/recovery-key-backup',
    keys: 'recovery',
  },
};

function pathsOf(target: string): Paths {
  const paths = TARGETS[target];
  if (!paths) throw new UsageError(`-target must be "barrier" or "recovery", not "${target}"`);
  return paths;
}

type Body = Record<string, any>;

export function registerOperatorRekey(operator: Command, ctx: CliContext): void {
  withClientOptions(
    operator
      .command('rekey')
      .description('Generate new unseal (or, with -target=recovery, recovery) key shares (-init, then a threshold of current shares); needs a token')
      .argument('[key]', 'a current key share ("-" reads standard input; prompted for when omitted)'),
  )
    .option('--init', 'start a rekey (with -key-shares, -key-threshold, -pgp-keys, -backup, -verify)')
    .option('--cancel', 'cancel the rekey (with -verify: restart the verification only)')
    .option('--status', 'show the rekey (with -verify: the verification)')
    .option('--verify', 'with -init: require the new shares to be verified; otherwise act on the verification')
    .option('--key-shares <n>', 'number of new key shares', '5')
    .option('--key-threshold <n>', 'number of new shares needed to unseal', '3')
    .option('--pgp-keys <files>', 'comma-separated public key files: each new share is encrypted to one')
    .option('--backup', 'keep the PGP-encrypted new shares in storage (sys/rekey/backup)')
    .option('--backup-retrieve', 'show the backed-up encrypted shares')
    .option('--backup-delete', 'delete the backed-up encrypted shares')
    .option('--nonce <nonce>', 'the nonce of the rekey (or, with -verify, of the verification)')
    .option('--target <target>', '"barrier" for the unseal key shares, "recovery" for the recovery key shares of an auto seal', 'barrier')
    .action(async (key: string | undefined, opts: RekeyOptions) => {
      const paths = pathsOf(opts.target);
      const client = await clientFor(ctx, opts);
      const format = formatOf(opts);
      const out = (text: string) => ctx.io.out(text);
      if (opts.backupDelete) {
        await client.delete(paths.backup);
        return out('Success! Deleted stored keys (if they existed)\n');
      }
      if (opts.backupRetrieve) return out(render(format, (await client.read(paths.backup)).body));
      if (opts.cancel) {
        if (opts.verify) return out(statusText(format, (await client.delete(paths.verify)).body, true));
        await client.request('DELETE', paths.init, opts.nonce ? { nonce: opts.nonce } : undefined);
        return out('Success! Canceled rekeying (if it was started)\n');
      }
      if (opts.init) return init(client, format, opts, ctx, paths);
      const statusPath = opts.verify ? paths.verify : paths.init;
      const status = (await client.read(statusPath)).body as Body;
      if (opts.status) return out(statusText(format, status, opts.verify ?? false));

      if (!status.started) throw new UsageError(`No rekey is in progress. Start one with "keywarden operator rekey -init${opts.target === 'recovery' ? ' -target=recovery' : ''}".`);
      const share = await shareToSubmit(ctx.io, key, opts.nonce, status.nonce ?? '');
      const res = (await client.write(opts.verify ? paths.verify : paths.update, share)).body as Body;
      if (!res.complete) return out(statusText(format, res, opts.verify ?? false));
      if (opts.verify) return out(format === 'json' ? json(res) : 'Rekey verification successful.\n');
      out(format === 'json' ? json(res) : keysText(res, status, paths));
      if (format === 'table' && res.verification_required) out(statusText(format, (await client.read(paths.verify)).body, true));
    });
}

async function init(client: ApiClient, format: OutputFormat, opts: RekeyOptions, ctx: CliContext, paths: Paths): Promise<void> {
  const shares = Number(opts.keyShares);
  const threshold = Number(opts.keyThreshold);
  if (!Number.isInteger(shares) || !Number.isInteger(threshold)) throw new UsageError('-key-shares and -key-threshold must be integers');
  const pgpKeys = opts.pgpKeys ? await readPublicKeyFiles(opts.pgpKeys) : [];
  const res = await client.write(paths.init, {
    secret_shares: shares,
    secret_threshold: threshold,
    ...(pgpKeys.length > 0 ? { pgp_keys: pgpKeys } : {}),
    backup: opts.backup ?? false,
    require_verification: opts.verify ?? false,
  });
  if (format === 'table' && pgpKeys.length === 0) {
    ctx.io.err('WARNING! If you lose the new keys after they are returned, there is no recovery. Consider -pgp-keys (and -backup) to protect them.\n\n');
  }
  // A recovery key that had no shares: the new ones come back at once (OpenBao's behaviour).
  if (res.body.complete === true) {
    ctx.io.out(format === 'json' ? json(res.body) : keysText(res.body as Body, { n: shares, t: threshold }, paths));
    return;
  }
  ctx.io.out(statusText(format, res.body, false));
}

function statusText(format: OutputFormat, status: Body, verification: boolean): string {
  if (format === 'json') return json(status);
  if (verification) {
    return table([
      ['Nonce', status.nonce],
      ['Started', status.started],
      ['New Shares', status.n],
      ['New Threshold', status.t],
      ['Verification Progress', `${status.progress}/${status.t}`],
    ]);
  }
  const rows: [string, unknown][] = [
    ['Nonce', status.nonce],
    ['Started', status.started],
  ];
  if (status.started) {
    rows.push(
      ['Rekey Progress', `${status.progress}/${status.required}`],
      ['New Shares', status.n],
      ['New Threshold', status.t],
      ['Verification Required', status.verification_required],
    );
  }
  if (Array.isArray(status.pgp_fingerprints) && status.pgp_fingerprints.length > 0) {
    rows.push(['PGP Fingerprints', status.pgp_fingerprints], ['Backup', status.backup]);
  }
  return table(rows);
}

function keysText(res: Body, status: Body, paths: Paths): string {
  const keys: string[] = res.keys_base64 ?? res.keys ?? [];
  const fingerprints: string[] = res.pgp_fingerprints ?? [];
  const lines = keys.map((k, i) => (fingerprints.length > 0 ? `Key ${i + 1} fingerprint: ${fingerprints[i]}; value: ${k}` : `Key ${i + 1}: ${k}`));
  let text = `\n${lines.join('\n')}\n\nOperation nonce: ${res.nonce}\n`;
  if (fingerprints.length > 0 && res.backup) {
    const where = paths.keys === 'recovery' ? 'core/recovery-keys-backup' : 'core/unseal-keys-backup';
    const flag = paths.keys === 'recovery' ? ' -target=recovery' : '';
    text += `\nThe encrypted ${paths.keys} keys are backed up to "${where}" in the storage backend. Remove them with "keywarden operator rekey -backup-delete${flag}".\n`;
  }
  text += res.verification_required
    ? `\nA new key was created, split into ${status.n} key shares with a threshold of ${status.t}. It is NOT in use until a threshold of these shares is verified ("keywarden operator rekey -verify${paths.keys === 'recovery' ? ' -target=recovery' : ''} -nonce=${res.verification_nonce} <share>"); until then the current shares stay valid.\n\n`
    : `\nRekeyed with ${status.n} key shares and a key threshold of ${status.t}. Distribute the shares above securely: at least ${status.t} of them are needed to ${paths.keys === 'recovery' ? 'authorize root generation and recovery rekey' : 'unseal'} from now on.\n`;
  return text;
}

function json(body: unknown): string {
  return `${JSON.stringify(body, null, 2)}\n`;
}
