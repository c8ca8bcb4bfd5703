/** `config/rotate-root`: replace the configured access key with a new one that only the service knows. */
import { definePath, type AnyPathDefinition, BadRequestError } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { readClientConfig } from '../client-config.js';
import { STORAGE_KEYS, writeJson } from '../storage.js';
import { providerFailure } from '../failures.js';

export function configRotateRootPath(ctx: CloudAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'config/rotate-root',
    fields: {},
    operations: {
      update: {
        summary: 'Rotate the access key of config/client.',
        handler: async () => {
          const config = await readClientConfig(ctx.storage);
          if (!config) throw new BadRequestError("can't update client config because it's unset");
          if (!config.access_key) throw new BadRequestError("can't update access_key because it's unset");
          if (!config.secret_key) throw new BadRequestError("can't update secret_key because it's unset");
          // Every call is made with the old key: a new key can take seconds to work everywhere.
          const iam = ctx.provider.withKey({ accessKeyId: config.access_key, secretAccessKey: config.secret_key });
          try {
            const userName = await iam.currentUserName().catch((err) => {
              throw providerFailure('error calling GetUser', err);
            });
            const created = await iam.createAccessKey(userName).catch((err) => {
              throw providerFailure('error calling CreateAccessKey', err);
            });
            try {
              await writeJson(ctx.storage, STORAGE_KEYS.clientConfig, { ...config, access_key: created.accessKeyId, secret_key: created.secretAccessKey });
            } catch (err) {
              await iam.deleteAccessKey(userName, created.accessKeyId).catch((cleanup) => {
                ctx.logger.error({ err: cleanup }, 'rotate-root: the new access key could not be deleted after failing to store it');
              });
              throw err;
            }
            ctx.provider.flush();
            await iam.deleteAccessKey(userName, config.access_key).catch((err) => {
              throw providerFailure(`the new key ${created.accessKeyId} is stored, but deleting the old key ${config.access_key} failed`, err);
            });
            return { data: { access_key: created.accessKeyId } };
          } finally {
            iam.close();
          }
        },
      },
    },
    synopsis: 'Rotate the configured access key.',
    description:
      'Creates a new access key for the IAM user of config/client, stores it, and deletes the old one; afterwards only the ' +
      'service knows the secret. The user must have only this one key (IAM allows two). The new access key ID is returned.',
  });
}
