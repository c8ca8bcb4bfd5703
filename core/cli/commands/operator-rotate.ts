/** `operator rotate` and `operator key-status`: the barrier's keyring, as `vault operator rotate|key-status`. */
import type { Command } from 'commander';
import { attempt, clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { renderData } from '../output.js';

/** sys/key-status's fields, which vault prints as they are with -format=json. */
interface KeyStatus {
  readonly term: number;
  readonly install_time: string;
  readonly encryptions: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A time as Go's RFC822 layout prints it in UTC (`26 Nov 26 18:05 UTC`), as vault shows the install time. */
function rfc822(iso: string): string {
  const t = new Date(iso);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(t.getUTCDate())} ${MONTHS[t.getUTCMonth()]} ${two(t.getUTCFullYear() % 100)} ${two(t.getUTCHours())}:${two(t.getUTCMinutes())} UTC`;
}

/** The three rows vault prints, in columns without a header. */
function keyStatusText(status: KeyStatus): string {
  const rows: [string, string][] = [
    ['Key Term', String(status.term)],
    ['Install Time', rfc822(status.install_time)],
    ['Encryption Count', String(status.encryptions)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}    ${v}\n`).join('');
}

function keyStatusOf(data: Record<string, unknown>): KeyStatus {
  return { term: data.term as number, install_time: data.install_time as string, encryptions: data.encryptions as number };
}

export function registerOperatorRotate(operator: Command, ctx: CliContext): void {
  withClientOptions(operator.command('rotate').description('Add a new barrier key term; new data is encrypted under it (needs sudo)')).action(
    async (opts: GlobalOptions) => {
      const client = await clientFor(ctx, opts);
      await attempt('Error rotating key', () => client.write('sys/rotate'));
      const res = await attempt('Error reading key status', () => client.read('sys/key-status'));
      const status = keyStatusOf(res.body.data as Record<string, unknown>);
      ctx.io.out(renderData(formatOf(opts), status, () => `Success! Rotated key\n\n${keyStatusText(status)}`));
    },
  );

  withClientOptions(operator.command('key-status').description('Show the active barrier key term and its encryption count')).action(
    async (opts: GlobalOptions) => {
      const client = await clientFor(ctx, opts);
      const res = await attempt('Error reading key status', () => client.read('sys/key-status'));
      const status = keyStatusOf(res.body.data as Record<string, unknown>);
      ctx.io.out(renderData(formatOf(opts), status, () => keyStatusText(status)));
    },
  );
}
