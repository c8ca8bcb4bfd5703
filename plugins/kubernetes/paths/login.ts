/** `login`: log in with a service account token against a role. */
import { createPublicKey } from 'node:crypto';
import { BadRequestError, PermissionDeniedError, UpstreamError, checkLoginAddress, definePath, globMatch, tokenAuth, type AnyPathDefinition, type FieldSpecs } from '../../../sdk/index.js';
import { ApiServerUnavailableError, ReviewRefusedError, namespaceLabels, reviewToken, type ApiServer } from '../api-server.js';
import { readConfig, type KubernetesConfig } from '../config.js';
import type { KubernetesAuthContext } from '../context.js';
import { parseSelector, selects } from '../namespace-selector.js';
import { readRole, type KubernetesRole } from '../role.js';
import { TokenRefusedError, readServiceAccount, type ServiceAccount } from '../service-account.js';

const FIELDS = {
  role: { type: 'string', description: 'The role to log in against (required).' },
  jwt: { type: 'string', description: 'The service account token (required).', sensitive: true },
} as const satisfies FieldSpecs;

export function loginPath(ctx: KubernetesAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'login',
    fields: FIELDS,
    unauthenticated: true,
    operations: {
      update: {
        summary: 'Log in with a service account token.',
        handler: async (req, input) => {
          if (!input.role) throw new BadRequestError('missing role');
          if (!input.jwt) throw new BadRequestError('missing jwt');
          const role = await readRole(ctx.storage, input.role);
          if (!role) throw new BadRequestError(`invalid role name "${input.role}"`);
          checkLoginAddress(role.token, req);
          const config = await readConfig(ctx.storage);
          if (!config) throw new BadRequestError('could not load backend configuration');
          const { api, hasReviewer } = await apiServer(ctx, config, input.jwt);
          try {
            const account = await readServiceAccount(input.jwt, config, role, config.pem_keys.map((pem) => createPublicKey(pem)), ctx.clock.now());
            await checkBindings(role, account, api, hasReviewer);
            const aliasName = aliasNameOf(role, account);
            const reviewed = await reviewToken(api, input.jwt, role.audience !== '' ? [role.audience] : account.audiences);
            if (reviewed.name !== account.name) throw new ReviewRefusedError('JWT names did not match');
            if (reviewed.uid !== account.uid) throw new ReviewRefusedError('JWT UIDs did not match');
            if (reviewed.namespace !== account.namespace) throw new ReviewRefusedError('JWT namespaces did not match');
            const metadata = {
              service_account_uid: account.uid,
              service_account_name: account.name,
              service_account_namespace: account.namespace,
              service_account_secret_name: account.secretName,
            };
            return {
              auth: {
                ...tokenAuth(role.token),
                displayName: `${account.namespace}-${account.name}`,
                alias: { name: aliasName, metadata },
                metadata: { ...metadata, role: input.role },
                internalData: { role: input.role },
              },
            };
          } catch (err) {
            if (err instanceof TokenRefusedError || err instanceof ReviewRefusedError) throw new PermissionDeniedError(err.message);
            if (err instanceof ApiServerUnavailableError) throw new UpstreamError(err.message);
            throw err;
          }
        },
      },
    },
    synopsis: 'Log in with a Kubernetes service account token.',
    description:
      'The token\'s service account must be bound to the role (name and namespace, by glob or namespace label), its ' +
      'audience must be the role\'s, and the API server\'s TokenReview must find it valid now. A token that is refused ' +
      'is a 403; an API server that cannot be reached or fails is a 502.',
  });
}

/** How the API server is reached: the configured CA and reviewer token, else the pod's, else the login's own token. */
async function apiServer(ctx: KubernetesAuthContext, config: KubernetesConfig, jwt: string): Promise<{ api: ApiServer; hasReviewer: boolean }> {
  const local = !config.disable_local_ca_jwt;
  const caPem = config.kubernetes_ca_cert || (local ? await ctx.pod.caCert() : '');
  const reviewer = config.token_reviewer_jwt || (local ? await ctx.pod.token() : '');
  return { api: { host: config.kubernetes_host, caPem, bearer: reviewer || jwt, timeoutMs: ctx.timeoutMs }, hasReviewer: reviewer !== '' };
}

/** The role's bound names and namespaces (by list, else by the namespace's labels). */
async function checkBindings(role: KubernetesRole, account: ServiceAccount, api: ApiServer, hasReviewer: boolean): Promise<void> {
  const names = role.bound_service_account_names;
  if (!(names.length === 1 && names[0] === '*') && !names.some((pattern) => globMatch(pattern, account.name))) {
    throw new TokenRefusedError('service account name not authorized');
  }
  const namespaces = role.bound_service_account_namespaces;
  if (namespaces[0] === '*' || namespaces.some((pattern) => globMatch(pattern, account.namespace))) return;
  const selector = role.bound_service_account_namespace_selector;
  if (selector === '') throw new TokenRefusedError('namespace not authorized');
  if (!hasReviewer) {
    throw new TokenRefusedError('namespace not authorized err=namespace lookup failed: TokenReviewer JWT needs to be configured to use namespace selectors');
  }
  let labels: Record<string, string>;
  try {
    labels = await namespaceLabels(api, account.namespace);
  } catch (err) {
    if (err instanceof ReviewRefusedError) throw new TokenRefusedError(`namespace not authorized err=${err.message}`);
    throw err;
  }
  if (!selects(parseSelector(selector), labels)) throw new TokenRefusedError('namespace not authorized');
}

function aliasNameOf(role: KubernetesRole, account: ServiceAccount): string {
  if (role.alias_name_source === 'serviceaccount_name') {
    if (account.namespace === '' || account.name === '') throw new TokenRefusedError('service account namespace and name must be set');
    return `${account.namespace}/${account.name}`;
  }
  if (account.uid === '') throw new TokenRefusedError('could not parse UID from claims');
  return account.uid;
}
