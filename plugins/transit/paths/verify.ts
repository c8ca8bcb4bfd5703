/**
 * `verify/:name(/:hash_algorithm)`: checks a signature made by sign, an HMAC made by hmac or a
 * CMAC made by cmac (https://developer.hashicorp.com/vault/api-docs/secret/transit#verify-signed-data).
 * A request verifies one kind: a single request gives exactly one of `signature`, `hmac` and
 * `cmac`, and every batch item gives the same one. For CMACs the URL segment is the MAC length
 * (url_mac_length), as in cmac/:name/:url_mac_length.
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
import { verifyCmacs } from './cmac.js';
import { hmacVerifyResult, inputLength, readBatchItems, referenceOf, runItems, single, verifyHmacs, type BatchItem } from './hmac.js';
import { checkNoneHash, checkSignatureContext, signingFamily, signingOptions, SIGNING_OPTION_FIELDS, usesEd25519Variant, type ItemContexts } from './sign.js';
import { checkPqOptions, isPqFamily, runItemsAsync, verifyPq } from './pq-items.js';

type VerifyInput = FieldValues<typeof VERIFY_FIELDS>;

const VERIFY_FIELDS = {
  name: { type: 'name', description: 'Name of the key that made the signature or HMAC.', required: true },
  input: { type: 'string', description: 'Base64 data that was signed or HMACed (empty when omitted); one of input or batch_input.' },
  signature: { type: 'string', description: 'The signature to check (vault:v<N>:…), as sign returned it; give one of signature, hmac and cmac.' },
  hmac: { type: 'string', description: 'The HMAC to check (vault:v<N>:…), as hmac returned it; give one of signature, hmac and cmac.' },
  cmac: { type: 'string', description: 'The CMAC to check (vault:v<N>:…), as cmac returned it; give one of signature, hmac and cmac.' },
  mac_length: {
    type: 'int',
    description: 'CMACs: the length in bytes the CMAC was made with (1 to 16; 0 or unset: 16); a CMAC of another length is not valid.',
  },
  batch_input: {
    type: 'object-list',
    description:
      'Items {input, signature, hmac or cmac, context, signature_context, mac_length, reference} checked in one request, results in input order; ' +
      'every item gives the same one of signature, hmac and cmac. The top-level input, signature, hmac and cmac are then ignored.',
  },
  ...SIGNING_OPTION_FIELDS,
} as const satisfies FieldSpecs;

export function verifyPath(ctx: TransitContext) {
  return definePath({
    pattern: 'verify/:name/:hash_algorithm?',
    fields: VERIFY_FIELDS,
    operations: {
      update: { summary: 'Verify a signature or HMAC of input data.', handler: (req, input) => verifyHandler(ctx, req, input) },
    },
    synopsis: HELP_SYNOPSIS,
    description: HELP_DESCRIPTION,
  });
}

async function verifyHandler(ctx: TransitContext, req: LogicalRequest, input: VerifyInput) {
  const batch = input.batch_input !== undefined;
  const items: BatchItem[] = input.batch_input
    ? readBatchItems(input.batch_input, ['input', 'signature', 'hmac', 'cmac', 'context', 'signature_context', 'mac_length', 'reference'])
    : [
        {
          input: input.input ?? '',
          ...(input.signature !== undefined ? { signature: input.signature } : {}),
          ...(input.hmac !== undefined ? { hmac: input.hmac } : {}),
          ...(input.cmac !== undefined ? { cmac: input.cmac } : {}),
          ...(input.context !== undefined ? { context: input.context } : {}),
          ...(input.signature_context !== undefined ? { signature_context: input.signature_context } : {}),
        },
      ];

  const kind = kindOf(items, batch);
  if (kind !== 'signature' && items.some((item) => item.signature_context)) throw new BadRequestError('signature_context applies to signatures only, not to HMACs or CMACs');
  if (kind === 'cmac') {
    const url = urlSegment(req.path);
    if (input.hash_algorithm !== undefined && input.hash_algorithm !== url) throw new BadRequestError('hash_algorithm does not apply to CMACs; mac_length gives their length');
    const { outcomes, warnings } = await verifyCmacs(ctx, input.name, { url, body: input.mac_length }, items);
    const answer = batch
      ? { batch_results: await answerEntries(outcomes, (outcome, i) => hmacVerifyResult(outcome, referenceOf(items[i]!, input.reference))) }
      : { valid: single(outcomes[0]!) };
    return { data: answer, ...(warnings ? { warnings } : {}) };
  }
  if (input.mac_length !== undefined) throw new BadRequestError('mac_length applies to CMACs only; this request verifies a signature or an HMAC');
  if (kind === 'hmac') {
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
  checkSignatureContext(family, items);
  if (isPqFamily(family)) checkPqOptions(family, options);

  const outcomes = await inSlices(items, signingCost(policy, 'public', inputLength, usesEd25519Variant(family, options, items)), (slice) =>
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
          const signatureContext = item.signature_context ? decodeBase64(item.signature_context, 'signature_context') : undefined;
          return verifyOne(policy, family, data, item.signature!, { context, signatureContext }, options);
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

type VerifyKind = 'signature' | 'hmac' | 'cmac';
const KINDS: readonly VerifyKind[] = ['signature', 'hmac', 'cmac'];

/**
 * Whether the request checks signatures, HMACs or CMACs, with Vault's texts for a request that
 * gives several, none, or a mix across batch items. An item that gives several is refused too
 * (Vault takes it as a signature item).
 */
function kindOf(items: readonly BatchItem[], batch: boolean): VerifyKind {
  const given = (item: BatchItem) => KINDS.filter((kind) => item[kind] !== undefined);
  if (!batch) {
    const kinds = given(items[0]!);
    if (kinds.length > 1) throw new BadRequestError("provide one of 'signature', 'hmac' or 'cmac'");
    if (kinds.length === 0) throw new BadRequestError("none of 'signature', 'hmac' or 'cmac' was given to verify");
    return kinds[0]!;
  }
  const counts = new Map<VerifyKind, number>();
  items.forEach((item, i) => {
    const kinds = given(item);
    if (kinds.length > 1) throw new BadRequestError(`batch_input[${i}] provides ${kinds.map((k) => `'${k}'`).join(' and ')}; provide one of them`);
    if (kinds.length === 1) counts.set(kinds[0]!, (counts.get(kinds[0]!) ?? 0) + 1);
  });
  if (counts.size > 1) throw new BadRequestError("elements of batch_input must all provide either 'signature', 'hmac' or 'cmac'");
  const [kind, count] = [...counts][0] ?? [];
  if (kind === undefined) throw new BadRequestError("no batch_input elements have 'signature', 'hmac' or 'cmac'");
  if (count! < items.length) throw new BadRequestError(`some elements of batch_input are missing '${kind}'`);
  return kind;
}

function itemInput(item: BatchItem): Buffer {
  if (item.input === undefined) throw new BadRequestError('missing input');
  const data = decodeBase64(item.input, 'input');
  if (item.signature === undefined) throw new BadRequestError('missing signature');
  return data;
}

/** The optional segment after the key's name (verify/:name/:segment), as the URL gave it. */
function urlSegment(path: string): string | undefined {
  const segment = path.split('/')[2];
  return segment === undefined || segment === '' ? undefined : decodeURIComponent(segment);
}

function verifyOne(policy: KeyPolicy, family: SigningFamily, data: Buffer, signature: string, { context, signatureContext }: ItemContexts, options: SignOptions): boolean {
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
  return verifyBytes(family, key, data, bytes, options, signatureContext);
}

const HELP_SYNOPSIS = 'Verify a signature or HMAC for input data created using the named key.';
const HELP_DESCRIPTION =
  'Returns valid: true or false. Give signature (with the same hash_algorithm, prehashed, signature_algorithm, salt_length ' +
  'and marshaling_algorithm as when signing, the context for derived ed25519 keys and the signature_context of an Ed25519ctx ' +
  'or Ed25519ph signature), hmac (hash_algorithm is then the ' +
  "HMAC's algorithm) or cmac (with the mac_length it was made with; the URL segment is then url_mac_length). Versions below " +
  'min_decryption_version are refused. With batch_input every item gets its own result; the request still answers 200 ' +
  '(HMAC and CMAC results omit valid when it is false, as Vault does).';
