/** The plugins compiled into Keywarden; the server registers each at start-up. */
import type { PluginManifest } from './plugin.js';
import { transitPlugin } from '../../plugins/transit/backend.js';
import { awsAuthPlugin, cloudAuthPlugin } from '../../plugins/cloud-auth/backend.js';
import { genericPlugin, kvPlugin } from '../../plugins/kv/backend.js';
import { jwtAuthPlugin, oidcAuthPlugin } from '../../plugins/jwt/backend.js';
import { kubernetesAuthPlugin } from '../../plugins/kubernetes/backend.js';
import { userpassPlugin } from '../../plugins/userpass/backend.js';
import { appRolePlugin } from '../../plugins/approle/backend.js';
import { pkiPlugin } from '../../plugins/pki/backend.js';

export const BUILTIN_PLUGINS: readonly PluginManifest[] = [
  transitPlugin, cloudAuthPlugin, awsAuthPlugin, kvPlugin, genericPlugin, jwtAuthPlugin, oidcAuthPlugin, kubernetesAuthPlugin, userpassPlugin, appRolePlugin, pkiPlugin,
];
