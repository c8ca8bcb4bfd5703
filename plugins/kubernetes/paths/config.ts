/** `config`: the API server that reviews tokens, and how tokens are checked before it is asked. */
import { createPublicKey, X509Certificate } from 'node:crypto';
import { BadRequestError, definePath, type AnyPathDefinition, type FieldSpecs, type FieldValues } from '../../../sdk/index.js';
import { CONFIG_STORAGE_VERSION, configResponse, readConfig, writeConfig, type KubernetesConfig } from '../config.js';
import type { KubernetesAuthContext } from '../context.js';

const FIELDS = {
  kubernetes_host: { type: 'string', description: 'URL of the Kubernetes API server (https://host:port).' },
  kubernetes_ca_cert: { type: 'string', description: 'CA certificate (PEM) of the API server; in a pod, its service account CA when unset.' },
  token_reviewer_jwt: {
    type: 'string',
    description: 'Token the TokenReview calls authenticate with; never returned. In a pod, its service account token when unset; else the token of the login itself.',
    sensitive: true,
  },
  pem_keys: { type: 'comma-string-list', description: 'PEM public keys (or certificates) that service account tokens are verified with locally, before the TokenReview.' },
  issuer: { type: 'string', description: `The "iss" tokens must name when issuer validation is on (default "kubernetes/serviceaccount"). Deprecated.` },
  disable_iss_validation: { type: 'bool', description: 'Do not check the issuer of tokens (the default: the TokenReview checks them). Deprecated.', default: true },
  disable_local_ca_jwt: { type: 'bool', description: 'Do not fall back to the pod\'s service account token and CA certificate.', default: false },
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function configPath(ctx: KubernetesAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'config',
    fields: FIELDS,
    refusedFields: {
      use_annotations_as_alias_metadata: 'service account annotations are not read here (it would take a further API permission)',
    },
    operations: {
      read: {
        summary: 'Read the configuration (without the reviewer token).',
        handler: async () => {
          const config = await readConfig(ctx.storage);
          return config ? { data: configResponse(config) } : null;
        },
      },
      update: { summary: 'Write the configuration; it replaces the one before.', handler: async (_req, input) => write(ctx, input) },
    },
    synopsis: 'Configure the Kubernetes API server and the checks of tokens.',
    description:
      'Logins are checked by the API server\'s TokenReview at kubernetes_host, authenticated by token_reviewer_jwt. ' +
      'With pem_keys, a token\'s signature is verified locally first. The API server is not contacted when the ' +
      'configuration is written.',
  });
}

async function write(ctx: KubernetesAuthContext, input: Input) {
  const host = input.kubernetes_host ?? '';
  if (host === '') throw new BadRequestError('no host provided');
  if (!/^https?:\/\/[^/]/.test(host)) throw new BadRequestError(`kubernetes_host "${host}" is not an http or https URL`);
  const caCert = input.kubernetes_ca_cert ?? '';
  if (input.disable_local_ca_jwt && caCert === '') throw new BadRequestError('kubernetes_ca_cert must be given when disable_local_ca_jwt is true');
  const pemKeys = input.pem_keys ?? [];
  pemKeys.forEach((pem, i) => {
    try {
      createPublicKey(pem);
    } catch (err) {
      throw new BadRequestError(`pem_keys: key ${i + 1} is not a PEM public key or certificate: ${(err as Error).message}`);
    }
  });
  const config: KubernetesConfig = {
    version: CONFIG_STORAGE_VERSION,
    kubernetes_host: host,
    kubernetes_ca_cert: caCert,
    token_reviewer_jwt: input.token_reviewer_jwt ?? '',
    pem_keys: pemKeys,
    issuer: input.issuer ?? '',
    disable_iss_validation: input.disable_iss_validation,
    disable_local_ca_jwt: input.disable_local_ca_jwt,
  };
  await writeConfig(ctx.storage, config);
  // Vault keeps a CA it cannot read and warns in its log; here the warning reaches whoever wrote it.
  return caCert !== '' && !readableCertificate(caCert)
    ? { warnings: ['kubernetes_ca_cert holds no certificate that can be read: TLS connections to the API server will fail'] }
    : null;
}

function readableCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}
