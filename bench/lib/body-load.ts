/**
 * A load generator in its own process (so its own work never delays the client being measured):
 * POSTs one large body, without a token, to a path of a server, again and again until told to
 * stop (SIGTERM), and prints how many answers it got.
 *
 *   node body-load.js <address> <path> <bytes> <shape>
 *
 * Shapes: `strings` — `{"a":["x","x",…]}`, the body that once stalled a server with an audit
 * device for tens of seconds; `pgp` — `sys/init`'s `pgp_keys` of junk keys, which were once parsed
 * before anything cheaper was checked.
 */
import http from 'node:http';

const [address, target, bytesText, shape] = process.argv.slice(2);
const size = Number(bytesText);

function body(): Buffer {
  if (shape === 'pgp') {
    const keys = 5;
    const key = 'mQENBF'.padEnd(Math.floor((size - 100) / keys), 'A');
    return Buffer.from(JSON.stringify({ secret_shares: keys, secret_threshold: 3, pgp_keys: Array.from({ length: keys }, () => key) }));
  }
  const items = Math.floor((size - 8) / 4);
  return Buffer.from(`{"a":[${'"x",'.repeat(items - 1)}"x"]}`);
}

const payload = body();
const url = new URL(address!);
let answers = 0;
let stopping = false;

function send(): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: `/v1/${target}`, method: 'POST', agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length } },
      (res) => {
        res.resume();
        res.on('end', () => {
          answers++;
          resolve();
        });
      },
    );
    // A server that answers before reading the body closes the connection under the upload.
    req.on('error', () => resolve());
    req.end(payload);
  });
}

// Stops at once, an upload under way or not: a server that stalls on one must not hold the bench.
process.on('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`${answers}\n`, () => process.exit(0));
});
process.stdout.write('ready\n');
while (!stopping) await send();
