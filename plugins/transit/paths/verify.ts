/**
 * `verify/:name(/:hash_algorithm)`: checks a signature made by sign, or an HMAC made by hmac
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#verify-signed-data). A request verifies signatures or HMACs, never
 * both: a single request gives exactly one of `signature` and `hmac`, and every batch item gives
 * the same one.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { BadRequestError, definePath, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import { decodeBase64 } from '../crypto/base64.js';
import { answerEntries, inSlices } from '../crypto/slices.js';
import { signingCost } from '../crypto/costs.js';
import { derivedEd25519PrivateKey, MISSING_CONTEXT } from '../crypto/derive.js';
import { decodeSignatureText, parseSignature, verifyBytes, type SignOptions, type SigningFamily } from '../crypto/signing.js';
import { hmacVerifyResult, inputLength, readBatchItems, referenceOf, runItems, single, verifyHmacs, type BatchItem } from './hmac.js';
import { checkNoneHash, signingFamily, signingOptions, SIGNING_OPTION_FIELDS } from './sign.js';
import { checkPqOptions, isPqFamily, runItemsAsync, verifyPq } from './pq-items.js';

type VerifyInput = FieldValues<typeof VERIFY_FIELDS>;

const VERIFY_FIELDS = {
  name: { type: 'name', description: 'Name of the key that made the signature or HMAC.', required: true },
  input: { type: 'string', description: 'Base64 data that was signed or HMACed (empty when omitted); one of input or batch_input.' },
  signature: { type: 'string', description: 'The signature to check (vault:v<N>:…), as sign returned it; give this or hmac, not both.' },
  hmac: { type: 'string', description: 'The HMAC to check (vault:v<N>:…), as hmac returned it; give this or signature, not both.' },
  batch_input: {
    type: 'object-list',
    description:
      'Items {input, signature or hmac, context, reference} checked in one request, results in input order; every item gives ' +
      'signature, or every item gives hmac. The top-level input, signature and hmac are then ignored.',
  },
  ...SIGNING_OPTION_FIELDS,
} as const satisfies FieldSpecs;

export function verifyPath(ctx: TransitContext) {
  return definePath({
    pattern: 'verify/:name/:hash_algorithm?',
    fields: VERIFY_FIELDS,
    refusedFields: {
      signature_context: 'Ed25519ctx and Ed25519ph signatures are Vault Enterprise features; ed25519 keys verify pure Ed25519 signatures here',
      cmac: 'CMAC keys are a Vault Enterprise feature; verify checks signatures and HMACs here',
    },
    operations: {
      update: { summary: 'Verify a signature or HMAC of input data.', handler: (req, input) => verifyHandler(ctx, req, input) },
    },
    synopsis: HELP_SYNOPSIS,
    description: HELP_DESCRIPTION,
  });
}

async function verifyHandler(ctx: TransitContext, _req: LogicalRequest, input: VerifyInput) {
  const batch = input.batch_input !== undefined;
  const items: BatchItem[] = input.batch_input
    ? readBatchItems(input.batch_input, ['input', 'signature', 'hmac', 'context', 'reference'])
    : [
        {
          input: input.input ?? '',
          ...(input.signature !== undefined ? { signature: input.signature } : {}),
          ...(input.hmac !== undefined ? { hmac: input.hmac } : {}),
          ...(input.context !== undefined ? { context: input.context } : {}),
        },
      ];

  if (kindOf(items, batch) === 'hmac') {
    const algorithm = input.hash_algorithm ?? input.algorithm ?? 'sha2-256';
    const outcomes = await verifyHmacs(ctx, input.name, algorithm, items);
    if (!batch) return { data: { valid: single(outcomes[0]!) } };
    return { data: { batch_results: await answerEntries(outcomes, (outcome, i) => hmacVerifyResult(outcome, referenceOf(items[i]!, input.reference))) } };
  }

  const options = signingOptions(input);
  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('signature verification key not found');
  const family = signingFamily(policy, 'verification');
  checkNoneHash(options);
  if (isPqFamily(family)) checkPqOptions(family, options);

  const outcomes = await inSlices(items, signingCost(policy, 'public', inputLength), (slice) =>
    isPqFamily(family)
      ? runItemsAsync(slice, (item) => {
          const data = itemInput(item);
          const parsed = parseSignature(item.signature!);
          const version = policy.versionForReading(parsed.version, 'signature');
          return verifyPq(policy, family, version, data, decodeSignatureText(parsed.text, options.marshaling));
        })
      : runItems(slice, (item) => {
          const data = itemInput(item);
          const context = item.context ? decodeBase64(item.context, 'context') : undefined;
          return verifyOne(policy, family, data, item.signature!, context, options);
        }),
  );

  if (!batch) return { data: { valid: single(outcomes[0]!) } };
  return {
    data: {
      batch_results: await answerEntries(outcomes, (outcome, i) => {
        const reference = referenceOf(items[i]!, input.reference);
        return 'error' in outcome ? { valid: false, error: outcome.error, reference } : { valid: outcome.ok, reference };
      }),
    },
  };
}

/**
 * Whether the request checks signatures or HMACs, with Vault's texts for a request that gives
 * both, neither, or a mix across batch items. An item that gives both is refused too (Vault takes
 * it as a signature item).
 */
function kindOf(items: readonly BatchItem[], batch: boolean): 'signature' | 'hmac' {
  if (!batch) {
    const item = items[0]!;
    if (item.signature !== undefined && item.hmac !== undefined) throw new BadRequestError("provide one of 'signature' or 'hmac'");
    if (item.signature === undefined && item.hmac === undefined) throw new BadRequestError("neither a 'signature' nor an 'hmac' were given to verify");
    return item.signature !== undefined ? 'signature' : 'hmac';
  }
  let signatures = 0;
  let hmacs = 0;
  items.forEach((item, i) => {
    if (item.signature !== undefined && item.hmac !== undefined) {
      throw new BadRequestError(`batch_input[${i}] provides both 'signature' and 'hmac'; provide one of them`);
    }
    if (item.signature !== undefined) signatures++;
    else if (item.hmac !== undefined) hmacs++;
  });
  const missing = items.length - signatures - hmacs;
  if (signatures > 0 && hmacs > 0) throw new BadRequestError("elements of batch_input must all provide 'signature' or all provide 'hmac'");
  if (missing > 0 && signatures > 0) throw new BadRequestError("some elements of batch_input are missing 'signature'");
  if (missing > 0 && hmacs > 0) throw new BadRequestError("some elements of batch_input are missing 'hmac'");
  if (missing > 0) throw new BadRequestError("no batch_input elements have 'signature' or 'hmac'");
  return hmacs > 0 ? 'hmac' : 'signature';
}

function itemInput(item: BatchItem): Buffer {
  if (item.input === undefined) throw new BadRequestError('missing input');
  const data = decodeBase64(item.input, 'input');
  if (item.signature === undefined) throw new BadRequestError('missing signature');
  return data;
}

function verifyOne(policy: KeyPolicy, family: SigningFamily, data: Buffer, signature: string, context: Buffer | undefined, options: SignOptions): boolean {
  const parsed = parseSignature(signature);
  const version = policy.versionForReading(parsed.version, 'signature');
  const bytes = decodeSignatureText(parsed.text, options.marshaling);
  let key: KeyObject;
  if (family === 'ed25519' && policy.settings.derived) {
    if (!context || context.length === 0) throw new BadRequestError(MISSING_CONTEXT);
    key = createPublicKey(derivedEd25519PrivateKey(version, context));
  } else {
    if (!version.publicKey) throw new BadRequestError(`key version ${version.version} has no public key`);
    key = version.publicKey;
  }
  return verifyBytes(family, key, data, bytes, options);
}

const HELP_SYNOPSIS = 'Verify a signature or HMAC for input data created using the named key.';
const HELP_DESCRIPTION =
  'Returns valid: true or false. Give signature (with the same hash_algorithm, prehashed, signature_algorithm, salt_length ' +
  'and marshaling_algorithm as when signing, and the context for derived ed25519 keys) or hmac (hash_algorithm is then the ' +
  "HMAC's algorithm). Versions below min_decryption_version are refused. With batch_input every item gets its own result; " +
  'the request still answers 200 (HMAC results omit valid when it is false, as Vault does).';
