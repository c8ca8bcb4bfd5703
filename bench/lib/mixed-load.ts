/**
 * A load generator in its own process (its work never delays the client being measured): runs the
 * large requests of issue #36 back to back until told to stop (SIGTERM) — a 100,000-item batch
 * encrypt, a single encrypt, decrypt, rewrap, HMAC and hash of 30 MB, and a 20 MB body without a
 * token — and prints, as JSON, how many it sent of each and the answers it did not expect.
 *
 *   node mixed-load.js <address> <token> [warm-up passes]
 *
 * With warm-up passes, it first sends every request of the mix that many times before it says it
 * is ready, so that a benchmark's uncounted round has run each of them on the server (bench/README.md,
 * "Audit entries held as bytes, and a warm-up that runs the whole mix").
 *
 * The server must take the batch and the 30 MB items: its listener's JSON limits raised
 * (max_json_array_element_count, max_request_json_strings, max_json_string_value_length).
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';

const [address, token, passesText] = process.argv.slice(2);
const warmUpPasses = Number(passesText ?? 0);
const url = new URL(address!);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** POSTs `body` and resolves with the status and the text of the answer. */
function post(path: string, body: Buffer, withToken = true): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `/v1/${path}`,
        method: 'POST',
        // An upload refused unread closes its connection: it gets one of its own.
        agent: withToken ? agent : false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, ...(withToken ? { 'X-Vault-Token': token } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', (err) => resolve({ status: 0, text: err.message }));
    req.end(body);
  });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const big = randomBytes(22_500_000).toString('base64');
const encrypted = await post('transit/encrypt/bench', json({ plaintext: big }));
if (encrypted.status !== 200) throw new Error(`preparing the 30 MB ciphertext: ${encrypted.status} ${encrypted.text.slice(0, 300)}`);
const ciphertext = (JSON.parse(encrypted.text) as { data: { ciphertext: string } }).data.ciphertext;

const work: { name: string; path: string; body: Buffer; status: number; withToken?: boolean }[] = [
  { name: 'batch encrypt 100,000', path: 'transit/encrypt/bench', body: json({ batch_input: Array.from({ length: 100_000 }, () => ({ plaintext: randomBytes(64).toString('base64') })) }), status: 200 },
  { name: 'encrypt 30 MB', path: 'transit/encrypt/bench', body: json({ plaintext: big }), status: 200 },
  { name: 'decrypt 30 MB', path: 'transit/decrypt/bench', body: json({ ciphertext }), status: 200 },
  { name: 'rewrap 30 MB', path: 'transit/rewrap/bench', body: json({ ciphertext }), status: 200 },
  { name: 'hmac 30 MB', path: 'transit/hmac/bench', body: json({ input: big }), status: 200 },
  { name: 'hash 30 MB', path: 'transit/hash', body: json({ input: big }), status: 200 },
  { name: '20 MB without a token', path: 'transit/encrypt/bench', body: Buffer.from(`{"a":[${'"x",'.repeat(5 * 1024 * 1024 - 1)}"x"]}`), status: 403, withToken: false },
];

const sent: Record<string, number> = {};
const unexpected: string[] = [];
let stopping = false;

// Stops at once, a request under way or not: a server that stalls on one must not hold the bench.
process.on('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ sent, unexpected: unexpected.slice(0, 10) })}\n`, () => process.exit(0));
});
/** Sends `w` once and notes an answer it did not expect, under `label`. */
async function send(w: (typeof work)[number], label: string): Promise<void> {
  const answer = await post(w.path, w.body, w.withToken !== false);
  if (answer.status !== w.status) unexpected.push(`${label}: ${answer.status} ${answer.text.slice(0, 200)}`);
}

for (let pass = 0; pass < warmUpPasses; pass++) {
  for (const w of work) await send(w, `warm-up ${w.name}`);
}
process.stdout.write('ready\n');
while (!stopping) {
  for (const w of work) {
    if (stopping) break;
    await send(w, w.name);
    sent[w.name] = (sent[w.name] ?? 0) + 1;
  }
}
