/**
 * Loaded into a server under BENCH_PROFILE (`node --import`): notes every time the event loop went
 * more than HOLD_MS without coming round, as a pair of monotonic times in microseconds (the clock
 * of V8's CPU profile), and writes them to `<BENCH_PROFILE>/holds-<pid>.json` when the process
 * exits. profile-summary.ts then names what ran in each.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const HOLD_MS = 10;
const holds: [number, number][] = [];
const micros = () => Number(process.hrtime.bigint() / 1000n);
let last = micros();
// A timer runs once per turn of the loop at most; a late one means the loop was held.
setInterval(() => {
  const now = micros();
  if (now - last > HOLD_MS * 1000) holds.push([last, now]);
  last = now;
}, 1).unref();
process.on('exit', () => writeFileSync(path.join(process.env.BENCH_PROFILE!, `holds-${process.pid}.json`), JSON.stringify(holds)));
