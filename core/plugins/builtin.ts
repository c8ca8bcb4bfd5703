/**
 * The plugins compiled into Keywarden; the server registers each at start-up. A plugin's module
 * (its backend and the libraries it uses) is imported by its first mount, not at start-up: every
 * module loaded stays on V8's heap, which each full collection marks while the event loop shares
 * the CPU with it, and most servers mount a few of these plugins (bench/README.md, "Libraries
 * loaded on first use"). The manifests registered here are each plugin's own (manifest.ts), and
 * the factory is the one its backend.ts exports.
 */
import type { PluginManifest } from './plugin.js';
import { TRANSIT_PLUGIN } from '../../plugins/transit/manifest.js';
import { AWS_PLUGIN, CLOUD_PLUGIN } from '../../plugins/cloud-auth/manifest.js';
import { GENERIC_PLUGIN, KV_PLUGIN } from '../../plugins/kv/manifest.js';
import { JWT_PLUGIN, OIDC_PLUGIN } from '../../plugins/jwt/manifest.js';
import { KUBERNETES_PLUGIN } from '../../plugins/kubernetes/manifest.js';
import { USERPASS_PLUGIN } from '../../plugins/userpass/manifest.js';
import { APPROLE_PLUGIN } from '../../plugins/approle/manifest.js';
import { PKI_PLUGIN } from '../../plugins/pki/manifest.js';

/** `about`, whose factory imports the plugin's module (once: the module cache keeps it) and calls the factory it exports. */
function importedOnFirstMount(about: Omit<PluginManifest, 'factory'>, load: () => Promise<PluginManifest>): PluginManifest {
  return { ...about, factory: async (context) => (await load()).factory(context) };
}

const transit = () => import('../../plugins/transit/backend.js');
const cloudAuth = () => import('../../plugins/cloud-auth/backend.js');
const kv = () => import('../../plugins/kv/backend.js');
const jwt = () => import('../../plugins/jwt/backend.js');

export const BUILTIN_PLUGINS: readonly PluginManifest[] = [
  importedOnFirstMount(TRANSIT_PLUGIN, async () => (await transit()).transitPlugin),
  importedOnFirstMount(CLOUD_PLUGIN, async () => (await cloudAuth()).cloudAuthPlugin),
  importedOnFirstMount(AWS_PLUGIN, async () => (await cloudAuth()).awsAuthPlugin),
  importedOnFirstMount(KV_PLUGIN, async () => (await kv()).kvPlugin),
  importedOnFirstMount(GENERIC_PLUGIN, async () => (await kv()).genericPlugin),
  importedOnFirstMount(JWT_PLUGIN, async () => (await jwt()).jwtAuthPlugin),
  importedOnFirstMount(OIDC_PLUGIN, async () => (await jwt()).oidcAuthPlugin),
  importedOnFirstMount(KUBERNETES_PLUGIN, async () => (await import('../../plugins/kubernetes/backend.js')).kubernetesAuthPlugin),
  importedOnFirstMount(USERPASS_PLUGIN, async () => (await import('../../plugins/userpass/backend.js')).userpassPlugin),
  importedOnFirstMount(APPROLE_PLUGIN, async () => (await import('../../plugins/approle/backend.js')).appRolePlugin),
  importedOnFirstMount(PKI_PLUGIN, async () => (await import('../../plugins/pki/backend.js')).pkiPlugin),
];
