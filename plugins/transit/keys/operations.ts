/** Changes to keys that several paths share: creation (also by upsert) and rotation. */
import { BadRequestError } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { KeyPolicy, newPolicySettings } from './key-policy.js';
import { generateVersion } from './key-version.js';

export interface CreateKeyInput {
  readonly type: string;
  readonly derived: boolean;
  readonly convergent: boolean;
  readonly exportable: boolean;
  readonly allowPlaintextBackup: boolean;
  readonly keySize: number;
  readonly autoRotatePeriod: number;
  readonly parameterSet?: string | undefined;
  readonly hybridPqc?: string | undefined;
  readonly hybridEc?: string | undefined;
}

/** Creates a key with version 1, unless it exists; returns the key and whether it existed. */
export async function createKey(ctx: TransitContext, name: string, input: CreateKeyInput): Promise<{ policy: KeyPolicy; existed: boolean }> {
  const settings = newPolicySettings({
    name,
    type: input.type,
    derived: input.derived,
    convergent: input.convergent,
    exportable: input.exportable,
    allowPlaintextBackup: input.allowPlaintextBackup,
    keySize: input.keySize,
    autoRotatePeriod: input.autoRotatePeriod,
    parameterSet: input.parameterSet,
    hybridPqc: input.hybridPqc,
    hybridEc: input.hybridEc,
  });
  return ctx.keys.withLock(name, async () => {
    const existing = await ctx.keys.get(name);
    if (existing) return { policy: existing, existed: true };
    const empty = new KeyPolicy(settings, new Map());
    const first = await generateVersion(empty.info, 1, ctx.clock.now(), {
      keySize: settings.keySize,
      convergent: settings.convergentEncryption,
      pq: empty.pq,
      parameterSet: settings.parameterSet,
    });
    const policy = empty.with({ latestVersion: 1 }, new Map([[1, first]]));
    return { policy: await ctx.keys.save(policy, [first]), existed: false };
  });
}

/** Adds a version (docs/transit.md, "Keys and their one-way settings"); imported keys only with allow_rotation, and stop being "imported". */
export async function rotateKey(ctx: TransitContext, name: string): Promise<KeyPolicy> {
  return ctx.keys.withLock(name, async () => {
    const policy = await ctx.keys.get(name);
    if (!policy) throw new BadRequestError('key not found');
    const s = policy.settings;
    if (s.imported && !s.allowImportedKeyRotation) throw new BadRequestError(`imported key ${name} does not allow rotation within Keywarden`);
    const next = s.latestVersion + 1;
    const version = await generateVersion(policy.info, next, ctx.clock.now(), { keySize: s.keySize, convergent: s.convergentEncryption, pq: policy.pq, parameterSet: s.parameterSet });
    const versions = new Map(policy.versions);
    versions.set(next, version);
    return ctx.keys.save(policy.with({ latestVersion: next, imported: false }, versions), [version]);
  });
}
