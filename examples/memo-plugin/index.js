// @ts-check
/**
 * memo: an example external secrets engine for Keywarden.
 *
 * It keeps short memos under names, each with an optional time to live; a read of an expired memo
 * finds nothing, and the host's periodic hook sweeps expired memos away. It shows the parts every
 * plugin has: a manifest (name, kind, version), paths declared with their fields and operations,
 * storage through the mount's own view, and a lifecycle hook.
 *
 * The module is one file and imports only `keywarden/sdk` (which the server provides: the plugin
 * always runs against the SDK of the server it runs in) and Node's built-ins. The server checks the
 * file's SHA-256 against the catalog before every load, so anything else it imported would escape
 * that check; a plugin with dependencies is bundled into one file first.
 */
import { FrameworkBackend, definePath, listResponse, BadRequestError } from 'keywarden/sdk';

/** Reported by `memo/info`; keep it equal to package.json's version. */
const VERSION = '1.0.0';

/** Every memo lives under this storage prefix, one JSON document per name. */
const MEMO_PREFIX = 'memo/';

/**
 * @typedef {{ text: string, created: number, expires: number }} Memo
 * `expires` is a Unix time in milliseconds; 0 means never.
 */

/**
 * @param {import('keywarden/sdk').Storage} storage
 * @param {string} name
 * @returns {Promise<Memo | undefined>}
 */
async function readMemo(storage, name) {
  const raw = await storage.get(MEMO_PREFIX + name);
  return raw ? JSON.parse(Buffer.from(raw).toString('utf8')) : undefined;
}

/** @param {Memo} memo @param {number} now */
const expired = (memo, now) => memo.expires !== 0 && memo.expires <= now;

/** @param {import('keywarden/sdk').PluginContext} context */
function createBackend(context) {
  const memo = definePath({
    pattern: 'memos/:name',
    fields: {
      name: { type: 'string', description: 'The memo name.', required: true },
      text: { type: 'string', description: 'The memo text.' },
      ttl: { type: 'duration', description: 'How long the memo lives (0: until deleted).', default: 0 },
    },
    existenceCheck: async (req, input) => (await readMemo(req.storage, input.name)) !== undefined,
    operations: {
      create: { summary: 'Write a memo.', handler: (req, input) => write(req, input) },
      update: { summary: 'Replace a memo.', handler: (req, input) => write(req, input) },
      read: {
        summary: 'Read a memo.',
        handler: async (req, input) => {
          const found = await readMemo(req.storage, input.name);
          if (!found || expired(found, context.clock.now().getTime())) return null;
          return {
            data: {
              text: found.text,
              created_time: new Date(found.created).toISOString(),
              expire_time: found.expires ? new Date(found.expires).toISOString() : '',
            },
          };
        },
      },
      delete: {
        summary: 'Delete a memo.',
        handler: async (req, input) => {
          await req.storage.delete(MEMO_PREFIX + input.name);
          return null;
        },
      },
    },
    synopsis: 'One memo.',
    description: 'Write creates or replaces the memo; read returns it until its TTL runs out.',
  });

  const list = definePath({
    pattern: 'memos/',
    fields: {},
    operations: {
      list: { summary: 'List memos.', handler: async (req) => listResponse(await req.storage.list(MEMO_PREFIX)) },
    },
    synopsis: 'List memo names.',
    description: 'Expired memos stay listed until the periodic sweep removes them.',
  });

  const info = definePath({
    pattern: 'info',
    fields: {},
    operations: {
      read: { summary: 'Report the plugin version.', handler: async () => ({ data: { plugin: 'memo', version: VERSION } }) },
    },
    synopsis: 'The running plugin version.',
    description: 'Shows which release of the plugin serves this mount.',
  });

  /**
   * @param {import('keywarden/sdk').LogicalRequest} req
   * @param {{ name: string, text?: string, ttl: number }} input
   */
  async function write(req, input) {
    if (input.text === undefined || input.text === '') throw new BadRequestError('missing required field "text"');
    const now = context.clock.now().getTime();
    /** @type {Memo} */
    const doc = { text: input.text, created: now, expires: input.ttl > 0 ? now + input.ttl * 1000 : 0 };
    await req.storage.put(MEMO_PREFIX + input.name, Buffer.from(JSON.stringify(doc)));
    return null;
  }

  return new FrameworkBackend({
    description: 'Short memos with an expiry (example plugin).',
    paths: [memo, list, info],
    // The host calls this on its timer; a plugin never starts timers of its own.
    periodic: async () => {
      const now = context.clock.now().getTime();
      for (const name of await context.storage.list(MEMO_PREFIX)) {
        const found = await readMemo(context.storage, name);
        if (found && expired(found, now)) await context.storage.delete(MEMO_PREFIX + name);
      }
    },
  });
}

/** @type {import('keywarden/sdk').PluginManifest} */
export default {
  name: 'memo',
  kind: 'secret',
  version: VERSION,
  description: 'Short memos with an expiry (example plugin).',
  factory: createBackend,
};
