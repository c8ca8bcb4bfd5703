/**
 * `monitor`: the server's log lines as they are written, as `vault monitor` prints them
 * (https://developer.hashicorp.com/vault/docs/commands/monitor), through sys/monitor, until
 * interrupted or the server ends the stream (it seals or shuts down).
 */
import type { Command } from 'commander';
import { Writable } from 'node:stream';
import { attempt, clientFor, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';

interface MonitorOptions extends GlobalOptions {
  readonly logLevel: string;
  readonly logFormat: string;
}

export function registerMonitor(program: Command, ctx: CliContext): void {
  withClientOptions(program.command('monitor').description("Stream the server's log lines until interrupted"))
    .option('--log-level <level>', 'trace, debug, info, warn or error', 'info')
    .option('--log-format <format>', 'standard or json', 'standard')
    .action(async (opts: MonitorOptions) => {
      const client = await clientFor(ctx, opts);
      // A piece of the stream may end inside a character: the decoder keeps the rest for the next.
      const decoder = new TextDecoder();
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          ctx.io.out(decoder.decode(chunk, { stream: true }));
          done();
        },
      });
      await attempt('Error starting monitor', () => client.follow('sys/monitor', { log_level: opts.logLevel, log_format: opts.logFormat }, sink));
    });
}
