/**
 * `operator generate-root`: a new root token from a threshold of unseal key shares, as
 * `vault operator generate-root`. By default it uses Vault's unauthenticated sys/generate-root
 * (for operators who lost every token); `-authenticated` uses sys/generate-root-token with the
 * CLI's token. `-decode` and `-generate-otp` run locally: the OTP never leaves this machine.
 */
import type { Command } from 'commander';
import { UsageError, type ApiClient } from '../client.js';
import { clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { readPublicKeyFile, shareToSubmit } from '../operator-shares.js';
import { table, type OutputFormat } from '../output.js';
import { decodeToken, generateOtp } from '../../seal/otp.js';
import { errorMessage } from '../../errors.js';

interface GenerateRootOptions extends GlobalOptions {
  readonly init?: boolean;
  readonly cancel?: boolean;
  readonly status?: boolean;
  readonly generateOtp?: boolean;
  readonly decode?: string;
  readonly otp?: string;
  readonly pgpKey?: string;
  readonly nonce?: string;
  readonly authenticated?: boolean;
}

type Body = Record<string, any>;

/** One of the two endpoint families, with its answers unwrapped to the same status object. */
interface Family {
  readonly attempt: string;
  readonly update: string;
  unwrap(body: Body): Body;
}

const UNAUTHENTICATED: Family = { attempt: 'sys/generate-root/attempt', update: 'sys/generate-root/update', unwrap: (body) => body };
const AUTHENTICATED: Family = { attempt: 'sys/generate-root-token/attempt', update: 'sys/generate-root-token/update', unwrap: (body) => body.data };

export function registerOperatorGenerateRoot(operator: Command, ctx: CliContext): void {
  withClientOptions(
    operator
      .command('generate-root')
      .description('Generate a new root token from a threshold of unseal key shares (recovery key shares with an auto seal)')
      .argument('[key]', 'an unseal or recovery key share ("-" reads standard input; prompted for when omitted)'),
  )
    .option('--init', 'start a root token generation (with -otp or -pgp-key; an OTP is generated otherwise)')
    .option('--cancel', 'cancel the attempt (without a token with sudo on it, -nonce or a current key share as the argument is required)')
    .option('--status', 'show the attempt')
    .option('--generate-otp', 'print a new one-time password to use with -init')
    .option('--decode <encoded>', 'decode an encoded token with -otp')
    .option('--otp <otp>', 'the one-time password, for -init or -decode')
    .option('--pgp-key <file>', 'a public key file: the new token is encrypted to it')
    .option('--nonce <nonce>', 'the nonce of the attempt')
    .option('--authenticated', "use the token-authenticated sys/generate-root-token endpoints instead of Vault's unauthenticated ones")
    .action(async (key: string | undefined, opts: GenerateRootOptions) => {
      const format = formatOf(opts);
      const out = (text: string) => ctx.io.out(text);
      if (opts.decode !== undefined) {
        if (!opts.otp) throw new UsageError('Missing otp: use -otp to supply it');
        let token: string;
        try {
          token = decodeToken(opts.decode, opts.otp);
        } catch (err) {
          throw new UsageError(errorMessage(err));
        }
        return out(format === 'json' ? json({ token }) : `${token}\n`);
      }
      const client = await clientFor(ctx, opts);
      const family = opts.authenticated ? AUTHENTICATED : UNAUTHENTICATED;
      const status = async () => family.unwrap((await client.read(family.attempt)).body);

      if (opts.generateOtp) {
        const otp = generateOtp((await status()).otp_length);
        return out(format === 'json' ? json({ otp, otp_length: otp.length }) : `${otp}\n`);
      }
      if (opts.cancel) {
        // Without a token, the nonce or (Vault's family only) a current key share proves the
        // caller; the server checks either.
        const share = opts.authenticated ? undefined : key === '-' ? (await ctx.io.stdin()).trim() : key;
        const proof = { ...(opts.nonce ? { nonce: opts.nonce } : {}), ...(share ? { key: share } : {}) };
        if (!opts.authenticated && !client.token && Object.keys(proof).length === 0) {
          throw new UsageError(
            "cancelling without a token needs the attempt's nonce (-nonce) or one of the current unseal key shares (as the argument, or - to read it from standard input)",
          );
        }
        await client.request('DELETE', family.attempt, Object.keys(proof).length > 0 ? proof : undefined);
        return out('Success! Root token generation canceled (if it was started)\n');
      }
      if (opts.init) return init(client, family, format, opts, ctx);
      const current = await status();
      if (opts.status) return out(statusText(format, current, ctx));

      if (!current.started) {
        throw new UsageError(`No root generation is in progress. Start one with "keywarden operator generate-root -init"; an OTP must be ${current.otp_length} characters long.`);
      }
      const share = await shareToSubmit(ctx.io, key, opts.nonce, current.nonce ?? '');
      out(statusText(format, family.unwrap((await client.write(family.update, share)).body), ctx));
    });
}

async function init(client: ApiClient, family: Family, format: OutputFormat, opts: GenerateRootOptions, ctx: CliContext): Promise<void> {
  if (opts.otp && opts.pgpKey) throw new UsageError('cannot specify both -otp and -pgp-key');
  const pgpKey = opts.pgpKey ? await readPublicKeyFile(opts.pgpKey) : undefined;
  const res = await client.write(family.attempt, { ...(opts.otp ? { otp: opts.otp } : {}), ...(pgpKey ? { pgp_key: pgpKey } : {}) });
  ctx.io.out(statusText(format, family.unwrap(res.body), ctx));
}

function statusText(format: OutputFormat, status: Body, ctx: CliContext): string {
  if (format === 'json') return json(status);
  const rows: [string, unknown][] = [
    ['Nonce', status.nonce || 'n/a'],
    ['Started', status.started],
    ['Progress', `${status.progress}/${status.required}`],
    ['Complete', status.complete],
  ];
  if (status.pgp_fingerprint) rows.push(['PGP Fingerprint', status.pgp_fingerprint]);
  if (status.encoded_token) rows.push(['Encoded Token', status.encoded_token]);
  if (status.otp) {
    ctx.io.err('A One-Time-Password has been generated for you and is shown in the OTP field. You will need it to decode the new root token, so keep it safe.\n\n');
    rows.push(['OTP', status.otp]);
  }
  if (status.otp_length) rows.push(['OTP Length', status.otp_length]);
  return table(rows);
}

function json(body: unknown): string {
  return `${JSON.stringify(body, null, 2)}\n`;
}
