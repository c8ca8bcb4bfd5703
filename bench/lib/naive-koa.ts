/**
 * A transit-like batch encrypt server as a user would write it without Keywarden, on 127.0.0.1
 * (port printed on stdout): plain koa, the body read and JSON-parsed, per item a createCipheriv
 * with a random nonce (AES-256-GCM), and the answer built as objects for JSON.stringify.
 *   POST /encrypt — that server
 *   POST /echo    — its no-crypto twin: the same parsing, base64 and JSON work, no cipher
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import Koa from 'koa';

const KEY = randomBytes(32);

interface Item {
  plaintext?: string;
}

function seal(plaintext: Buffer): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', KEY, nonce);
  return `vault:v1:${Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]).toString('base64')}`;
}

const echo = (plaintext: Buffer): string => `vault:v1:${plaintext.toString('base64')}`;

const app = new Koa();
app.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { batch_input?: Item[] };
  const transform = ctx.path === '/encrypt' ? seal : echo;
  const results = (body.batch_input ?? []).map((item) => ({ ciphertext: transform(Buffer.from(item.plaintext ?? '', 'base64')), key_version: 1 }));
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify({ data: { batch_results: results } });
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
