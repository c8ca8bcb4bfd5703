/**
 * A worker thread of the password hasher (hasher.ts): runs bcrypt, which is slow on purpose, off
 * the server's event loop. Each message is one job; the answer carries its id.
 */
import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import type { HashJob, HashResult } from './hasher.js';

parentPort!.on('message', (job: HashJob) => {
  const work = job.op === 'hash' ? bcrypt.hash(job.password, job.cost) : bcrypt.compare(job.password, job.hash);
  work.then(
    (value: string | boolean) => parentPort!.postMessage({ id: job.id, ok: true, value } satisfies HashResult),
    (err: unknown) => parentPort!.postMessage({ id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies HashResult),
  );
});
