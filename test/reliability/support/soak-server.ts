/**
 * The server under soak, in its own process (forked with --expose-gc): the real `startServer` on
 * LevelDB, plus what only the process itself can measure — heap and RSS after a full collection,
 * and event-loop delay (perf_hooks.monitorEventLoopDelay) — answered over IPC.
 *
 * Messages: { cmd: 'stats', reset?: boolean } → { heapUsed, rss, eld: { mean, p50, p99, max } } (delay in ms);
 * { cmd: 'stop' } closes the server and exits.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { startServer } from '../../../core/server.js';
import { testConfig } from '../../helpers/server.js';

const dataDir = process.argv[2];
if (!dataDir || !process.send) throw new Error('usage: fork soak-server.js <data dir> (with an IPC channel)');

const base = testConfig({ leveldbPath: dataDir });
const server = await startServer({ config: { ...base, logLevel: 'warn' }, plugins: [], logger: pino({ level: 'warn' }) });
const RESOLUTION_MS = 10;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delay.enable();

/** The histogram holds whole intervals between its timer's ticks: the delay is what exceeds the resolution. */
const ms = (ns: number) => Math.max(0, Math.round(ns / 1e4 - RESOLUTION_MS * 100) / 100);
const collect = global.gc ?? (() => undefined);

process.on('message', (message: { cmd: string; reset?: boolean }) => {
  if (message.cmd === 'stats') {
    collect();
    collect();
    const memory = process.memoryUsage();
    process.send!({
      heapUsed: memory.heapUsed,
      rss: memory.rss,
      eld: { mean: ms(delay.mean), p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
    });
    if (message.reset) delay.reset();
  } else if (message.cmd === 'stop') {
    delay.disable();
    void server.close().then(() => process.exit(0));
  }
});
process.send({ address: server.address });
