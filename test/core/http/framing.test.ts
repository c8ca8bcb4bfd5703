/**
 * Request framing over a raw socket, through the LIST-verb stream (core/http/list-method.ts): the
 * server answers each request exactly once, in order, wherever requests fall in the TCP writes,
 * and never reads bytes of a body as a request. Every exchange ends with a request asking the
 * server to close, so the answers are counted up to that close with no waiting on timers.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { startServer } from '../../../core/server.js';
import { startUnsealedServer, testConfig } from '../../helpers/server.js';
import { RawHttpConnection, rawRequest, type RawHttpResponse, type RawRequestSpec } from '../../helpers/raw-http.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('HTTP framing over a raw socket', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };

  before(async () => {
    server = await startUnsealedServer();
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
    expect((await server.client.post('notes/notes/a', { text: 'A' })).status).to.equal(204);
    expect((await server.client.post('notes/notes/b', { text: 'B' })).status).to.equal(204);
  });
  after(() => server.close());

  const authed = (spec: RawRequestSpec): Buffer => rawRequest({ ...spec, headers: { 'X-Vault-Token': server.rootToken, ...spec.headers } });
  const listNotes = (spec: Partial<RawRequestSpec> = {}) => authed({ method: 'LIST', path: '/v1/notes/notes', ...spec });
  const readNote = (name: string) => authed({ method: 'GET', path: `/v1/notes/notes/${name}` });
  const health = (spec: Partial<RawRequestSpec> = {}) => rawRequest({ method: 'GET', path: '/v1/sys/health', ...spec });
  const closing = () => health({ close: true });
  /** Request-shaped bytes, for bodies: a LIST line the old stream rewrote, and a whole GET. */
  const requestShaped = 'LIST /v1/notes/notes HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/sys/seal-status HTTP/1.1\r\nHost: x\r\n\r\n';
  /** A POST carrying that body: the answer (a 400, the body is not JSON) shows the body was read as its body. */
  const postShaped = (spec: Partial<RawRequestSpec> = {}) => health({ method: 'POST', body: requestShaped, ...spec });

  /** Opens a connection, makes each write in turn, and reads every answer until the server closes. */
  async function exchange(writes: readonly (string | Buffer)[], isHead?: (index: number) => boolean): Promise<RawHttpResponse[]> {
    const connection = await RawHttpConnection.open(server.address);
    try {
      for (const bytes of writes) await connection.write(bytes);
      return await connection.untilClosed(isHead ? { isHead } : {});
    } finally {
      connection.close();
    }
  }

  const json = (res: RawHttpResponse) => JSON.parse(res.body);
  const statuses = (responses: readonly RawHttpResponse[]) => responses.map((r) => r.status);
  function expectNoteList(res: RawHttpResponse | undefined): void {
    expect(res?.status, res?.body).to.equal(200);
    expect(json(res!).data.keys).to.include.members(['a', 'b']);
  }
  function expectHealth(res: RawHttpResponse | undefined): void {
    expect(res?.status, res?.body).to.equal(200);
    expect(json(res!)).to.include({ initialized: true, sealed: false });
  }
  function expectShapedBodyRead(res: RawHttpResponse | undefined): void {
    expect(res?.status, res?.body).to.equal(400);
    expect(json(res!).errors[0]).to.include('failed to parse JSON input: Unexpected token \'L\', "LIST /v1/n"');
  }

  describe('pipelining', () => {
    it('answers requests pipelined in one write, LIST among them, each once and in order', async () => {
      const responses = await exchange([
        Buffer.concat([
          readNote('a'),
          listNotes(),
          authed({ method: 'POST', path: '/v1/notes/notes/c', body: JSON.stringify({ text: 'C' }) }),
          listNotes(),
          readNote('b'),
          closing(),
        ]),
      ]);
      expect(statuses(responses)).to.deep.equal([200, 200, 204, 200, 200, 200]);
      expect(json(responses[0]!).data.text).to.equal('A');
      expectNoteList(responses[1]);
      // Node runs pipelined requests side by side (only the answers are ordered), so whether this list saw c is open.
      expectNoteList(responses[3]);
      expect(json(responses[4]!).data.text).to.equal('B');
      expectHealth(responses[5]);
    });

    it('answers a LIST pipelined behind empty lines, which the parser skips between requests', async () => {
      const responses = await exchange([Buffer.concat([health(), Buffer.from('\r\n\n'), listNotes(), closing()])]);
      expect(statuses(responses)).to.deep.equal([200, 200, 200]);
      expectNoteList(responses[1]);
    });
  });

  describe('split writes', () => {
    it('reads a LIST request split at every byte position of its request line and headers', async () => {
      const list = listNotes();
      for (let split = 0; split < list.length; split++) {
        const connection = await RawHttpConnection.open(server.address);
        try {
          // The first write carries a whole request, so its answer shows the server has read the first part.
          await connection.write(Buffer.concat([health(), list.subarray(0, split)]));
          expectHealth(await connection.next());
          await connection.write(Buffer.concat([list.subarray(split), closing()]));
          const [listed, last, ...extra] = await connection.untilClosed();
          expectNoteList(listed);
          expectHealth(last);
          expect(extra, `split at ${split}`).to.deep.equal([]);
        } finally {
          connection.close();
        }
      }
    });

    it('reads a chunked body with extensions and trailers split at every byte position, then the LIST behind it', async () => {
      const head = Buffer.from('POST /v1/sys/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      const body = Buffer.from(`3;name="v 1"\r\nLIS\r\n${requestShaped.length.toString(16)}\r\n${requestShaped}\r\n0;last\r\nX-Trailer: t\r\n\r\n`);
      for (let split = 0; split <= body.length; split++) {
        const connection = await RawHttpConnection.open(server.address);
        try {
          await connection.write(Buffer.concat([head, body.subarray(0, split)]));
          // A pause so the two writes reach the server as two reads (at worst they arrive as one).
          await new Promise((resolve) => setTimeout(resolve, 1));
          await connection.write(Buffer.concat([body.subarray(split), listNotes(), closing()]));
          const responses = await connection.untilClosed();
          expect(statuses(responses), `split at ${split}`).to.deep.equal([400, 200, 200]);
          expectNoteList(responses[1]);
          expectHealth(responses[2]);
        } finally {
          connection.close();
        }
      }
    });
  });

  describe('bodies shaped like requests', () => {
    for (const method of ['GET', 'HEAD', 'LIST']) {
      it(`never reads the body of a ${method} sent after its answer as a request, even one starting with LIST`, async () => {
        // The reported desync: the server answers before reading this body, and the old stream took
        // the next bytes for a request start, rewrote the LIST line (25 bytes longer) and let its
        // tail through as a second request.
        const body = `LIST /v1/x HTTP/1.1\r\n${'A'.repeat(20)}GET /v1/abcd HTTP/1.0\r\n\r\n`;
        const path = method === 'LIST' ? '/v1/notes/notes' : '/v1/sys/health';
        const connection = await RawHttpConnection.open(server.address);
        try {
          await connection.write(authed({ method, path, body }).subarray(0, -body.length));
          expect((await connection.next({ head: method === 'HEAD' })).status).to.equal(200);
          await connection.write(body);
          await connection.write(closing());
          const rest = await connection.untilClosed();
          expect(statuses(rest)).to.deep.equal([200]);
          expectHealth(rest[0]);
        } finally {
          connection.close();
        }
      });
    }

    it('answers a POST whose body holds a LIST and a GET request exactly once', async () => {
      const responses = await exchange([Buffer.concat([postShaped(), closing()])]);
      expect(statuses(responses)).to.have.length(2);
      expectShapedBodyRead(responses[0]);
      expectHealth(responses[1]);
    });

    it('answers a chunked POST whose chunks hold a LIST and a GET request exactly once', async () => {
      const responses = await exchange([Buffer.concat([postShaped({ chunks: [5, 20] }), closing()])]);
      expect(statuses(responses)).to.have.length(2);
      expectShapedBodyRead(responses[0]);
      expectHealth(responses[1]);
    });
  });

  describe('Content-Length and Transfer-Encoding', () => {
    it('frames a Content-Length body and answers the LIST pipelined behind it', async () => {
      const responses = await exchange([Buffer.concat([postShaped(), listNotes(), closing()])]);
      expect(statuses(responses)).to.deep.equal([400, 200, 200]);
      expectShapedBodyRead(responses[0]);
      expectNoteList(responses[1]);
    });

    it('frames a chunked body and answers the LIST pipelined behind it', async () => {
      const responses = await exchange([Buffer.concat([postShaped({ chunks: [1, 1, 30] }), listNotes(), closing()])]);
      expect(statuses(responses)).to.deep.equal([400, 200, 200]);
      expectShapedBodyRead(responses[0]);
      expectNoteList(responses[1]);
    });

    it('frames chunk extensions and trailers and answers the LIST pipelined behind them', async () => {
      const chunked = `POST /v1/sys/health HTTP/1.1\r\nHost: x\r\ntransfer-encoding: Chunked\r\n\r\n5;ext;quoted="a b"\r\nLIST \r\n0;last=1\r\nX-Trailer: LIST /v1/x HTTP/1.1\r\n\r\n`;
      const responses = await exchange([Buffer.concat([Buffer.from(chunked), listNotes(), closing()])]);
      expect(statuses(responses)).to.deep.equal([400, 200, 200]);
      expectNoteList(responses[1]);
    });

    it('refuses a request with both Content-Length and Transfer-Encoding with 400 and closes the connection', async () => {
      const smuggling = 'POST /v1/sys/health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n';
      const responses = await exchange([Buffer.concat([Buffer.from(smuggling), listNotes(), health()])]);
      expect(statuses(responses)).to.deep.equal([400]);
      expect(json(responses[0]!)).to.deep.equal({ errors: ['malformed HTTP request'] });
    });

    it('refuses a LIST request with both Content-Length and Transfer-Encoding with 400 and closes the connection', async () => {
      const smuggling = listNotes({ headers: { 'Content-Length': '3', 'Transfer-Encoding': 'chunked' } });
      const responses = await exchange([Buffer.concat([smuggling, Buffer.from('0\r\n\r\n'), listNotes(), health()])]);
      expect(statuses(responses)).to.deep.equal([400]);
    });

    it('refuses conflicting Content-Length headers with 400 and closes the connection', async () => {
      const conflicting = 'POST /v1/sys/health HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabc';
      const responses = await exchange([Buffer.concat([Buffer.from(conflicting), listNotes(), health()])]);
      expect(statuses(responses)).to.deep.equal([400]);
    });

    it('refuses a Content-Length that is not a decimal number with 400 and closes the connection', async () => {
      const responses = await exchange([Buffer.concat([health({ headers: { 'Content-Length': '0x3' } }), Buffer.from('abc'), listNotes(), health()])]);
      expect(statuses(responses)).to.deep.equal([400]);
    });
  });

  describe('requests the stream cannot frame with certainty, left to the parser', () => {
    it('refuses a head with bare LF line endings with 400 and closes the connection', async () => {
      const responses = await exchange([Buffer.concat([Buffer.from('GET /v1/sys/health HTTP/1.1\nHost: x\nContent-Length: 5\n\n'), listNotes(), health()])]);
      expect(statuses(responses)).to.deep.equal([400]);
    });

    it('refuses a folded header with 400 and closes the connection', async () => {
      const responses = await exchange([Buffer.concat([Buffer.from('GET /v1/sys/health HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n 5\r\n\r\n'), listNotes(), health()])]);
      expect(statuses(responses)).to.deep.equal([400]);
    });

    it('leaves a LIST request line without an HTTP/1.x version to the parser, which refuses it with 400', async () => {
      const responses = await exchange([`LIST /v1/notes/notes\r\nX-Vault-Token: ${server.rootToken}\r\n\r\n`]);
      expect(statuses(responses)).to.deep.equal([400]);
    });

    it('stops rewriting after a request it cannot frame as surely as the parser: a LIST behind it gets the parser 400', async () => {
      // Node reads `gzip, chunked` as chunked; the stream follows only a plain `chunked`.
      const gzipped = 'GET /v1/sys/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n';
      const connection = await RawHttpConnection.open(server.address);
      try {
        await connection.write(gzipped);
        expectHealth(await connection.next());
        await connection.write(Buffer.concat([listNotes(), health()]));
        expect(statuses(await connection.untilClosed())).to.deep.equal([400]);
      } finally {
        connection.close();
      }
    });
  });

  describe('LIST with a body', () => {
    it('answers a LIST with a Content-Length body and the request pipelined behind it', async () => {
      const responses = await exchange([Buffer.concat([listNotes({ body: requestShaped }), readNote('a'), closing()])]);
      expect(statuses(responses)).to.deep.equal([200, 200, 200]);
      expectNoteList(responses[0]);
      expect(json(responses[1]!).data.text).to.equal('A');
    });

    it('answers a LIST with a chunked body and the request pipelined behind it', async () => {
      const responses = await exchange([Buffer.concat([listNotes({ body: requestShaped, chunks: [7] }), readNote('a'), closing()])]);
      expect(statuses(responses)).to.deep.equal([200, 200, 200]);
      expectNoteList(responses[0]);
    });
  });

  describe('HEAD', () => {
    it('answers HEAD with headers only, then answers the request pipelined behind it', async () => {
      const responses = await exchange([Buffer.concat([health({ method: 'HEAD' }), listNotes(), closing()])], (i) => i === 0);
      expect(statuses(responses)).to.deep.equal([200, 200, 200]);
      expect(responses[0]!.body).to.equal('');
      expectNoteList(responses[1]);
    });
  });

  describe('keep-alive', () => {
    for (const method of ['POST', 'GET']) {
      it(`keeps the connection after a ${method} with a body: a LIST sent after its answer is answered`, async () => {
        const connection = await RawHttpConnection.open(server.address);
        try {
          await connection.write(postShaped({ method }));
          const answer = await connection.next();
          if (method === 'POST') expectShapedBodyRead(answer);
          else expectHealth(answer);
          await connection.write(listNotes());
          expectNoteList(await connection.next());
          expect(connection.closed).to.equal(false);
        } finally {
          connection.close();
        }
      });
    }
  });

  describe('a slow LIST request line', () => {
    let slowServer: RunningServer;
    before(async () => {
      const base = testConfig();
      slowServer = await startServer({ config: { ...base, listeners: [{ ...base.listeners[0]!, readHeaderTimeoutMs: 300, readTimeoutMs: 800 }] }, logger: pino({ level: 'silent' }) });
    });
    after(() => slowServer.close());

    it('is refused once it has trickled in for longer than the header timeout on a keep-alive connection', async () => {
      // The stream holds a LIST request line until it is whole, and Node's parser, seeing nothing
      // of it, starts no header timer for a second request on a connection.
      const connection = await RawHttpConnection.open(slowServer.address);
      const line = `LIST /v1/sys/policies/acl${'/x'.repeat(50)} HTTP/1.1\r\n`;
      let trickle: NodeJS.Timeout | undefined;
      try {
        await connection.write(rawRequest({ method: 'GET', path: '/v1/sys/seal-status' }));
        expect((await connection.next()).status).to.equal(200);
        const started = Date.now();
        let sent = 0;
        // One byte every 50 ms: the whole line would take over 6 s.
        trickle = setInterval(() => {
          if (sent < line.length) connection.write(line[sent++]!).catch(() => undefined);
        }, 50);
        expect(statuses(await connection.untilClosed({ timeoutMs: 5_000 }))).to.deep.equal([400]);
        expect(Date.now() - started, 'closed long before the line could be whole').to.be.below(3_000);
      } finally {
        clearInterval(trickle);
        connection.close();
      }
    });
  });
});
