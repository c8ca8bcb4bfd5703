/**
 * A file audit device on a full disk (a size-limited tmpfs the test mounts; see
 * test/helpers/small-disk.ts) fails closed: a request it cannot record is refused with a 503 and
 * not carried out, and requests are served again once space is freed.
 */
import { expect } from 'chai';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer } from '../../helpers/server.js';
import { useSmallDisk } from '../../helpers/small-disk.js';

describe('file audit device on a full disk', function () {
  this.timeout(60_000);
  const smallDisk = useSmallDisk(4 * 1024 * 1024);

  it('refuses the requests it cannot record with a 503 and does not carry them out, then records and serves again once space is freed', async () => {
    const server = await startUnsealedServer({ audit: API_AUDIT });
    try {
      const log = path.join(smallDisk().path, 'audit.log');
      expect((await server.client.post('sys/audit/file', { type: 'file', options: { file_path: log } })).status).to.equal(204);
      expect((await server.client.post('sys/mounts/kv', { type: 'kv' })).status).to.equal(204);
      await smallDisk().fill(0);
      // Values are HMAC'd in the entry, field names are not: long names make entries that no
      // longer fit in what is left of the log file's last page.
      let refused: { status: number; body: any; text: string } | undefined;
      let tried = 0;
      for (; tried < 50 && !refused; tried++) {
        const write = await server.client.put(`kv/refused-${tried}`, { ['f'.repeat(6000)]: 'x' });
        if (write.status !== 204) refused = write;
      }
      expect(refused, 'no request was refused on the full disk').to.not.equal(undefined);
      expect(refused!.status, refused!.text).to.equal(503);
      expect(refused!.body.errors[0]).to.match(/audit/i);
      await smallDisk().release();
      const read = await server.client.get(`kv/refused-${tried - 1}`);
      expect(read.status, 'the refused write was not carried out').to.equal(404);
      expect((await server.client.put('kv/accepted', { value: 'y' })).status).to.equal(204);
      expect((await server.client.get('kv/accepted')).body.data).to.deep.equal({ value: 'y' });
    } finally {
      await server.close();
    }
  });
});
