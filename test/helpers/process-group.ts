/**
 * A command run as the leader of a process group of its own, for tests that start programs which
 * start others (npm → sh → node, a shell script's background jobs): everything they start stays in
 * the group unless it asks otherwise, so the test can see whether anything outlived the command
 * and end all of it with one signal.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

export class ProcessGroup {
  private out = '';
  private code: number | null | undefined;
  private readonly exited: Promise<void>;
  readonly pid: number;

  constructor(command: string, args: readonly string[], options: Pick<SpawnOptions, 'cwd' | 'env'>) {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.pid = child.pid!;
    child.stdout!.on('data', (d: Buffer) => (this.out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.out += d.toString()));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        this.code = code;
        resolve();
      });
      child.once('error', (err) => {
        this.out += `\n${err.message}`;
        this.code = null;
        resolve();
      });
    });
  }

  /** What the leader and the rest of the group wrote to the leader's stdout and stderr. */
  output(): string {
    return this.out;
  }

  /** The leader's exit code; undefined while it runs, null when a signal ended it. */
  exitCode(): number | null | undefined {
    return this.code;
  }

  /** Waits up to `ms` for the leader to exit; true when it did. */
  async waitExit(ms: number): Promise<boolean> {
    await Promise.race([this.exited, delay(ms)]);
    return this.code !== undefined;
  }

  /**
   * The group's live processes as `pid command`, the leader included while it runs. Read from
   * /proc, so that exited processes not yet reaped (zombies) do not count; elsewhere, whether the
   * group still has any process at all.
   */
  members(): string[] {
    if (!existsSync('/proc/self/stat')) return this.signal(0) ? [`process group ${this.pid}`] : [];
    const found: string[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        // `pid (comm) state ppid pgrp …`: the command name may hold spaces and parentheses.
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(pgrp) !== this.pid || state === 'Z') continue;
        found.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim()}`);
      } catch {
        // The process ended while we looked.
      }
    }
    return found;
  }

  /** Waits up to `ms` for every process of the group to end; returns those still running. */
  async waitEmpty(ms: number): Promise<string[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const left = this.members();
      if (left.length === 0 || Date.now() >= deadline) return left;
      await delay(100);
    }
  }

  /** Ends every process of the group: SIGTERM, then SIGKILL for what is still there 5 s later. */
  async stop(): Promise<void> {
    if (this.members().length === 0) return;
    this.signal('SIGTERM');
    if ((await this.waitEmpty(5_000)).length > 0) this.signal('SIGKILL');
    await this.waitExit(5_000);
  }

  private signal(signal: NodeJS.Signals | 0): boolean {
    try {
      process.kill(-this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}
