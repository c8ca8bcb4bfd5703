/**
 * `sys/host-info`: the machine this node runs on, in the shape of Vault's (cpu, cpu_times, disk,
 * host, memory, timestamp), read from node:os and statfs. Fields Vault takes from gopsutil that
 * Node does not know are left out rather than guessed.
 */
import os from 'node:os';
import { statfs } from 'node:fs/promises';
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function hostInfoPath(services: SystemDeps) {
  return definePath({
    pattern: 'host-info',
    fields: {},
    sudo: true,
    operations: {
      read: {
        summary: 'The host this node runs on.',
        handler: async () => ({ data: await hostInfo(services.diskPaths, services.clock.now()) }),
      },
    },
    synopsis: 'Information about the host of this node.',
    description: "CPUs and their times, the disks holding the node's data, the host's identity and uptime, and memory. Needs sudo.",
  });
}

async function hostInfo(diskPaths: readonly string[], now: Date): Promise<Record<string, unknown>> {
  const cpus = os.cpus();
  const total = os.totalmem();
  const free = os.freemem();
  const uptime = Math.floor(os.uptime());
  return {
    cpu: cpus.map((cpu, i) => ({ cpu: i, modelName: cpu.model, mhz: cpu.speed })),
    // node:os reports milliseconds; Vault (gopsutil) seconds.
    cpu_times: cpus.map((cpu, i) => ({
      cpu: `cpu${i}`,
      user: cpu.times.user / 1000,
      nice: cpu.times.nice / 1000,
      system: cpu.times.sys / 1000,
      idle: cpu.times.idle / 1000,
      irq: cpu.times.irq / 1000,
    })),
    disk: await Promise.all(diskPaths.map(disk)),
    host: {
      hostname: os.hostname(),
      uptime,
      bootTime: Math.floor(now.getTime() / 1000) - uptime,
      os: process.platform,
      platform: os.type(),
      kernelVersion: os.release(),
      kernelArch: os.machine(),
    },
    memory: { total, free, used: total - free, usedPercent: total > 0 ? ((total - free) / total) * 100 : 0 },
    timestamp: now.toISOString(),
  };
}

async function disk(path: string): Promise<Record<string, unknown>> {
  const stats = await statfs(path);
  const total = stats.blocks * stats.bsize;
  const free = stats.bavail * stats.bsize;
  const used = (stats.blocks - stats.bfree) * stats.bsize;
  const inodesUsed = stats.files - stats.ffree;
  return {
    path,
    total,
    free,
    used,
    usedPercent: used + free > 0 ? (used / (used + free)) * 100 : 0,
    inodesTotal: stats.files,
    inodesUsed,
    inodesFree: stats.ffree,
    inodesUsedPercent: stats.files > 0 ? (inodesUsed / stats.files) * 100 : 0,
  };
}
