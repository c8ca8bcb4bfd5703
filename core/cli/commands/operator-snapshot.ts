/**
 * `operator raft snapshot save|restore` (vault's commands, over Vault's `sys/storage/raft/snapshot`)
 * and `operator snapshot save|restore` (the same over `sys/storage/snapshot`). As in vault, they
 * print nothing when they succeed; a progress bar is drawn on standard error when it is a terminal.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { CommandError } from '../client.js';
import { attempt, clientFor, commandGroup, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { warningsOf } from '../output.js';
import { Progress } from '../progress.js';

export function registerOperatorSnapshot(operator: Command, ctx: CliContext): void {
  const raft = commandGroup(operator, 'raft', 'Storage snapshots at the paths of Vault\'s integrated storage');
  registerSnapshotCommands(commandGroup(raft, 'snapshot', 'Save or restore a snapshot of the whole store (sys/storage/raft/snapshot)'), ctx, 'sys/storage/raft/snapshot');
  registerSnapshotCommands(commandGroup(operator, 'snapshot', 'Save or restore a snapshot of the whole store (sys/storage/snapshot)'), ctx, 'sys/storage/snapshot');
}

function registerSnapshotCommands(group: Command, ctx: CliContext, apiPath: string): void {
  withClientOptions(
    group
      .command('save')
      .description('Save a snapshot of the whole store to a file (written 0600; replaced only once complete)')
      .argument('<file>', 'where to write the snapshot'),
  ).action(async (file: string, opts: GlobalOptions) => save(ctx, opts, apiPath, file));

  withClientOptions(
    group
      .command('restore')
      .description('Replace the whole store with a snapshot file')
      .argument('<file>', 'the snapshot to restore'),
  )
    .option('--force', "accept another cluster's snapshot: its keyring and unseal keys replace this cluster's, and the server seals")
    .action(async (file: string, opts: GlobalOptions & { force?: boolean }) => restore(ctx, opts, `${apiPath}${opts.force ? '-force' : ''}`, file));
}

/** Downloads into a private temporary file beside `file`, renamed over it only once complete. */
async function save(ctx: CliContext, opts: GlobalOptions, apiPath: string, file: string): Promise<void> {
  const client = await attempt('Error taking the snapshot', () => clientFor(ctx, opts));
  const partial = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.partial`);
  const out = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
  try {
    await once(out, 'open');
  } catch (err) {
    throw new CommandError(`Error opening output file: ${(err as Error).message}`, 1);
  }
  const progress = new Progress(ctx.io, 'Saving snapshot');
  try {
    await attempt('Error taking the snapshot', () => client.download(apiPath, out, (n) => progress.add(n)));
    await rename(partial, file).catch((err: Error) => {
      throw new CommandError(`Error writing output file: ${err.message}`, 1);
    });
  } catch (err) {
    out.destroy();
    await rm(partial, { force: true });
    throw err;
  } finally {
    progress.finish();
  }
}

async function restore(ctx: CliContext, opts: GlobalOptions, apiPath: string, file: string): Promise<void> {
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error(`${file} is not a file`);
    size = info.size;
  } catch (err) {
    throw new CommandError(`Error opening snapshot file: ${(err as Error).message}`, 1);
  }
  const client = await attempt('Error installing the snapshot', () => clientFor(ctx, opts));
  const progress = new Progress(ctx.io, 'Restoring snapshot', size);
  let res;
  try {
    res = await attempt('Error installing the snapshot', () => client.upload(apiPath, createReadStream(file), size, (n) => progress.add(n)));
  } finally {
    progress.finish();
  }
  const warnings = warningsOf(res.body);
  if (warnings) ctx.io.err(warnings);
}
