/**
 * Tidy of the identity access list and the role-tag deny list (docs/cloud-auth.md, "Tidy"): by
 * request (202, in the background) and from the periodic hook the host's timer calls, with the
 * safety buffer (default 72h for both lists), disable_periodic_tidy, and the deprecated names.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { ManualClock } from '../../helpers/server.js';
import type { TestResponse } from '../../helpers/http.js';
import type { Instance } from '../../fixtures/cloud/world.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { Tidier } from '../../../plugins/cloud-auth/tidy.js';
import { KeyedLock } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../../../plugins/cloud-auth/context.js';

const HOUR = 3600;
const STARTED = "Tidy operation successfully started. Any information from the operation will be printed to the server's logs.";
const RUNNING = 'Tidy operation already in progress.';
/** A buffer no entry outlives: a tidy that removes nothing. */
const NOTHING = { safety_buffer: '876000h' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cloud auth tidy', () => {
  const region = 'us-east-1';
  const AMI = 'ami-0bbbbbbbbbbbbbbbb';
  const TAG_KEY = 'VaultRole';

  /** A harness whose mount's max lease TTL is 1h, so access-list and deny-list entries expire an hour after they are written. */
  async function harness(clock: ManualClock): Promise<CloudHarness> {
    const h = await startCloudHarness({ clock });
    await h.configure();
    await h.registerTestCertificates();
    const tuned = await h.root.post('sys/auth/cloud/tune', { default_lease_ttl: '30m', max_lease_ttl: '1h' });
    expect(tuned.status, tuned.text).to.equal(204);
    await h.writeRole('web', { auth_type: 'ec2', bound_ami_id: AMI, role_tag: TAG_KEY });
    return h;
  }

  describe('by request', () => {
    const clock = new ManualClock();
    let h: CloudHarness;
    before(async () => {
      h = await harness(clock);
    });
    after(() => h.close());

    const loggedIn = async (): Promise<Instance> => {
      const instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI, tags: { [TAG_KEY]: (await h.root.post('auth/cloud/role/web/tag', {})).body.data.tag_value } });
      const res = await h.ec2Login(instance, { role: 'web' });
      expect(res.status, res.text).to.equal(200);
      return instance;
    };
    /** Starts a tidy, waiting while one still runs; answers the 202. */
    const startTidy = async (path: string, body: Record<string, unknown> = {}): Promise<TestResponse> => {
      for (let i = 0; i < 400; i++) {
        const res = await h.root.post(`auth/cloud/${path}`, body);
        if (res.status === 202) return res;
        expect(res.status, res.text).to.equal(200);
        expect(res.body.warnings).to.deep.equal([RUNNING]);
        await sleep(5);
      }
      throw new Error(`${path} stayed busy`);
    };
    /** A tidy, then the proof it finished: the next one (removing nothing) could start. */
    const tidied = async (path: string, body: Record<string, unknown> = {}) => {
      const started = await startTidy(path, body);
      await startTidy(path, NOTHING);
      return started;
    };
    const accessList = async () => ((await h.root.list('auth/cloud/identity-accesslist')).body.data?.keys ?? []) as string[];
    const denyList = async () => ((await h.root.list('auth/cloud/roletag-denylist')).body.data?.keys ?? []) as string[];

    it('removes only the access-list entries whose expiration plus safety_buffer has passed, under either name', async () => {
      const old = await loggedIn();
      clock.advance(2 * HOUR);
      const recent = await loggedIn();

      const started = await tidied('tidy/identity-whitelist');
      expect(started.body.warnings).to.deep.equal([STARTED]);
      expect(await accessList(), 'within the default 72h buffer').to.include.members([old.instanceId, recent.instanceId]);

      await tidied('tidy/identity-accesslist', { safety_buffer: '30m' });
      const left = await accessList();
      expect(left).not.to.include(old.instanceId);
      expect(left).to.include(recent.instanceId);

      clock.advance(HOUR + 1);
      await tidied('tidy/identity-accesslist', { safety_buffer: 0 });
      expect(await accessList()).not.to.include(recent.instanceId);
    });

    it('removes only the deny-list entries whose expiration plus safety_buffer has passed, under either name', async () => {
      const tag = async () => (await h.root.post('auth/cloud/role/web/tag', {})).body.data.tag_value as string;
      const old = await tag();
      await h.root.post(`auth/cloud/roletag-denylist/${old}`);
      clock.advance(2 * HOUR);
      const recent = await tag();
      await h.root.post(`auth/cloud/roletag-blacklist/${recent}`);

      await tidied('tidy/roletag-denylist');
      expect(await denyList(), 'within the default 72h buffer').to.include.members([old, recent]);
      await tidied('tidy/roletag-blacklist', { safety_buffer: '30m' });
      expect(await denyList()).to.deep.equal([recent]);
      clock.advance(72 * HOUR + HOUR + 1);
      await tidied('tidy/roletag-denylist');
      expect(await denyList()).to.deep.equal([]);
    });

    it('refuses a safety_buffer that is not a duration', async () => {
      const res = await h.root.post('auth/cloud/tidy/identity-accesslist', { safety_buffer: 'soon' });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors[0]).to.match(/safety_buffer/);
    });
  });

  describe('periodic', () => {
    const clock = new ManualClock();
    let h: CloudHarness;
    before(async () => {
      h = await harness(clock);
    });
    after(() => h.close());

    const login = async (): Promise<Instance> => {
      const value = (await h.root.post('auth/cloud/role/web/tag', {})).body.data.tag_value as string;
      const instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI, tags: { [TAG_KEY]: value } });
      expect((await h.ec2Login(instance, { role: 'web' })).status).to.equal(200);
      return instance;
    };
    const has = async (instance: Instance) => (await h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status === 200;
    /** One tick of the host's timer (the test config turns the timer itself off). */
    const tick = () => h.server.host.runPeriodic();

    it('tidies both lists from the host timer, at most once an hour, with the configured safety buffer', async () => {
      const instance = await login();
      const tag = (await h.root.post('auth/cloud/role/web/tag', {})).body.data.tag_value as string;
      await h.root.post(`auth/cloud/roletag-denylist/${tag}`);
      clock.advance(2 * HOUR);
      await tick();
      expect(await has(instance), 'the default buffer is 72h').to.equal(true);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${tag}`)).status, 'the deny list default is 72h too').to.equal(200);

      await h.root.post('auth/cloud/config/tidy/identity-accesslist', { safety_buffer: '30m' });
      await h.root.post('auth/cloud/config/tidy/roletag-denylist', { safety_buffer: '30m' });
      await tick();
      expect(await has(instance), 'not again within the hour').to.equal(true);
      clock.advance(HOUR);
      await tick();
      expect(await has(instance)).to.equal(false);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${tag}`)).status).to.equal(404);
    });

    it('skips a list whose config says disable_periodic_tidy', async () => {
      const instance = await login();
      await h.root.post('auth/cloud/config/tidy/identity-whitelist', { safety_buffer: '1s', disable_periodic_tidy: true });
      clock.advance(2 * HOUR);
      await tick();
      expect(await has(instance)).to.equal(true);
      await h.root.post('auth/cloud/config/tidy/identity-accesslist', { disable_periodic_tidy: false });
      clock.advance(HOUR);
      await tick();
      expect(await has(instance)).to.equal(false);
    });
  });

  describe('the tidier', () => {
    it('runs one tidy per list at a time, and says when one is already running', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const storage = new MemoryStorage();
      const slowList = storage.list.bind(storage);
      storage.list = async (prefix: string) => {
        await held;
        return slowList(prefix);
      };
      const ctx = { storage, clock: new ManualClock(), logger: pino({ level: 'silent' }), accessListLocks: new KeyedLock() } as unknown as CloudAuthContext;
      const tidier = new Tidier(ctx);
      expect(tidier.start('accesslist', 0)).to.equal(true);
      expect(tidier.start('accesslist', 0)).to.equal(false);
      expect(tidier.start('denylist', 0)).to.equal(true);
      release();
      await tidier.drain();
      expect(tidier.start('accesslist', 0)).to.equal(true);
      await tidier.drain();
    });
  });
});
