/**
 * The listener's request limits over a real listener: each refused with 400 or 413 naming its
 * setting, before any of the request's work is done; a batch over a limit is refused whole.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';

const items = (count: number) => Array.from({ length: count }, (_, i) => ({ plaintext: Buffer.from(`item ${i}`).toString('base64') }));

describe('request limits of a listener', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;

  before(async () => {
    server = await startUnsealedServer({ jsonLimits: { arrayElements: 4, strings: 20, stringLength: 64, objectEntries: 5, depth: 6 } });
    expect((await server.client.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
  });
  after(() => server.close());

  it('refuses a batch over max_json_array_element_count whole: no item is encrypted and no key is made', async () => {
    const refused = await server.client.post('transit/encrypt/made-by-batch', { batch_input: items(5) });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.equal("failed to parse JSON input: an array of more than 4 elements, over the listener's max_json_array_element_count");
    expect((await server.client.get('transit/keys/made-by-batch')).status).to.equal(404);
    const accepted = await server.client.post('transit/encrypt/made-by-batch', { batch_input: items(4) });
    expect(accepted.status).to.equal(200);
    expect(accepted.body.data.batch_results).to.have.length(4);
  });

  it('refuses a body over max_request_json_strings, max_json_string_value_length, max_json_object_entry_count or max_json_depth with 400 naming it', async () => {
    const cases: [unknown, string][] = [
      [{ a: 'x'.repeat(65) }, 'max_json_string_value_length'],
      [Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, i])), 'max_json_object_entry_count'],
      [{ a: [[[[[[1]]]]]] }, 'max_json_depth'],
      [Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, { a: 'b', c: 'd' }])), 'max_request_json_strings'],
    ];
    for (const [body, setting] of cases) {
      const answer = await server.client.post('transit/keys/never', body);
      expect(answer.status, setting).to.equal(400);
      expect(answer.body.errors[0]).to.match(new RegExp(`over the listener's ${setting}$`));
    }
    expect((await server.client.get('transit/keys/never')).status).to.equal(404);
  });

  it('holds a login, to a path that needs no token, to the same limits', async () => {
    expect((await server.client.post('sys/auth/userpass', { type: 'userpass' })).status).to.equal(204);
    const answer = await server.client.post('auth/userpass/login/bob', { password: 'x'.repeat(65) });
    expect(answer.status).to.equal(400);
    expect(answer.body.errors[0]).to.match(/over the listener's max_json_string_value_length$/);
  });
});
