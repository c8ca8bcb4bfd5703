/**
 * A bare koa JSON echo on 127.0.0.1 (port printed on stdout): the ceiling for single-request
 * throughput of a Node HTTP+JSON server on this machine, with none of Keywarden's pipeline.
 */
import Koa from 'koa';

const app = new Koa();
app.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { plaintext?: string };
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify({ data: { ciphertext: `vault:v1:${body.plaintext ?? ''}`, key_version: 1 } });
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
