/**
 * Password policies (`sys/policies/password/:name`,
 * https://developer.hashicorp.com/vault/docs/concepts/password-policies): an HCL (or JSON)
 * document with a `length` and `rule "charset" { charset, min-chars }` blocks, and generation
 * from it. As in Vault, a candidate is drawn uniformly from the union of the rules' charsets and
 * kept only when every rule's minimum is met, so each valid password is equally likely.
 */
import { randomInt } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { BadRequestError, InternalError } from '../errors.js';
import { HclSyntaxError, describeHclValue, parseHclDocument, type HclItem, type HclValue } from '../hcl.js';

/** Vault's bounds on a policy's length. */
export const MIN_PASSWORD_LENGTH = 4;
export const MAX_PASSWORD_LENGTH = 100;
/** Vault draws a character with one random byte's worth of choice: at most 255 characters in all. */
const MAX_CHARSET = 255;
/** Candidates drawn before generation gives up, and how many between turns of the event loop. */
const MAX_ATTEMPTS = 100_000;
const ATTEMPTS_PER_TURN = 500;

export interface CharsetRule {
  readonly charset: readonly string[];
  readonly minChars: number;
}

export interface PasswordPolicy {
  readonly length: number;
  readonly rules: readonly CharsetRule[];
  /** The union of the rules' charsets, each character once. */
  readonly charset: readonly string[];
}

function invalid(message: string): never {
  throw new BadRequestError(`invalid password policy: ${message}`);
}

function integer(value: HclValue, what: string): number {
  const n = value.kind === 'number' ? value.value : value.kind === 'string' && /^\d+$/.test(value.value) ? Number(value.value) : NaN;
  if (!Number.isSafeInteger(n)) invalid(`${what} must be an integer, got ${describeHclValue(value)}`);
  return n;
}

function parseCharsetRule(body: HclValue): CharsetRule {
  if (body.kind !== 'object') invalid(`a charset rule must be a block, got ${describeHclValue(body)}`);
  let charset: string | undefined;
  let minChars = 0;
  for (const item of body.items) {
    if (item.key === 'charset') {
      if (item.value.kind !== 'string') invalid(`charset must be a string, got ${describeHclValue(item.value)}`);
      charset = item.value.value;
    } else if (item.key === 'min-chars') {
      minChars = integer(item.value, 'min-chars');
      if (minChars < 0) invalid('min-chars must not be negative');
    } else {
      invalid(`unknown key ${JSON.stringify(item.key)} in a charset rule (it holds "charset" and "min-chars")`);
    }
  }
  if (charset === undefined || charset === '') invalid('a charset rule needs a non-empty "charset"');
  return { charset: [...new Set(charset)], minChars };
}

/** `rule "charset" { ... }` in HCL, `"rule": {"charset": {...}}` or a list of those in JSON. */
function parseRules(item: HclItem): CharsetRule[] {
  const blocks = item.value.kind === 'list' ? item.value.items : [item.value];
  const rules: CharsetRule[] = [];
  for (const block of blocks) {
    if (block.kind !== 'object') invalid(`rule must be a block, got ${describeHclValue(block)}`);
    for (const typed of block.items) {
      if (typed.key !== 'charset') invalid(`unrecognized rule type ${JSON.stringify(typed.key)} (the only type is "charset")`);
      const bodies = typed.value.kind === 'list' ? typed.value.items : [typed.value];
      for (const body of bodies) rules.push(parseCharsetRule(body));
    }
  }
  return rules;
}

/** Parses and checks a policy as Vault does at write time; 400 naming the problem. */
export function parsePasswordPolicy(text: string): PasswordPolicy {
  let document;
  try {
    document = parseHclDocument(text);
  } catch (err) {
    if (err instanceof HclSyntaxError) invalid(err.message);
    throw err;
  }
  let length: number | undefined;
  const rules: CharsetRule[] = [];
  for (const item of document.items) {
    if (item.key === 'length') length = integer(item.value, 'length');
    else if (item.key === 'rule') rules.push(...parseRules(item));
    else invalid(`unknown key ${JSON.stringify(item.key)} (a policy holds "length" and "rule")`);
  }
  if (length === undefined || length <= 0) invalid('length must be > 0');
  if (rules.length === 0) invalid('no charset specified');
  const charset = [...new Set(rules.flatMap((rule) => rule.charset))];
  if (charset.length > MAX_CHARSET) invalid(`charset is too long: limited to ${MAX_CHARSET} characters`);
  // Vault's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
  if (charset.some((c) => !/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(c))) invalid('non-printable character in charset');
  const required = rules.reduce((sum, rule) => sum + rule.minChars, 0);
  if (length < required) invalid(`specified rules require at least ${required} characters but ${length} is specified`);
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    throw new BadRequestError(`passwords must be between ${MIN_PASSWORD_LENGTH} and ${MAX_PASSWORD_LENGTH} characters`);
  }
  const policy = { length, rules, charset };
  if (!passes(policy, feasibleExample(policy))) {
    throw new BadRequestError('unable to construct test password from provided policy: are the rules impossible?');
  }
  return policy;
}

function passes(policy: PasswordPolicy, candidate: readonly string[]): boolean {
  return policy.rules.every((rule) => candidate.filter((c) => rule.charset.includes(c)).length >= rule.minChars);
}

/** Each rule's minimum from its own charset, then the first character: proof the rules can be met together. */
function feasibleExample(policy: PasswordPolicy): string[] {
  const chars = policy.rules.flatMap((rule) => Array.from({ length: rule.minChars }, (_, i) => rule.charset[i % rule.charset.length]!));
  while (chars.length < policy.length) chars.push(policy.charset[0]!);
  return chars.slice(0, policy.length);
}

/** A password from the policy; the event loop turns between batches of candidates, so a strict policy stalls no one. */
export async function generatePassword(policy: PasswordPolicy): Promise<string> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 0 && attempt % ATTEMPTS_PER_TURN === 0) await turn();
    const candidate = Array.from({ length: policy.length }, () => policy.charset[randomInt(policy.charset.length)]!);
    if (passes(policy, candidate)) return candidate.join('');
  }
  throw new InternalError('failed to generate password from policy: no candidate met its rules');
}
