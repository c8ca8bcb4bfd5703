/**
 * The common token_* fields of auth method roles (sdk/token-fields.ts): the deprecated names, and
 * where Vault's separately released plugins (jwt, kubernetes) apply them differently from its
 * built-in methods (approle, aws, userpass).
 */
import { expect } from 'chai';
import {
  PLUGIN_TOKEN_FIELD_RULES,
  applyTokenFields,
  defaultTokenSettings,
  tokenSettingsResponse,
  type LogicalRequest,
  type TokenFieldInput,
  type WithTokenSettings,
} from '../../sdk/index.js';

const MAX_LEASE_TTL = 3600;

/** Applies `input` (as coerced) to a new record; `data` is the raw body, which tells "" from absent. */
function apply(input: TokenFieldInput, rules = {}, data: Record<string, unknown> = {}) {
  const record: WithTokenSettings = { ...defaultTokenSettings(), legacy: {} };
  const warnings = applyTokenFields({ data } as unknown as LogicalRequest, input, record, MAX_LEASE_TTL, rules);
  return { record, warnings };
}

describe('the token fields of auth method roles', () => {
  it('takes the deprecated num_uses as token_num_uses and shows it back under the name it was written with', () => {
    const { record } = apply({ num_uses: 3 });
    expect(record.token_num_uses).to.equal(3);
    expect(tokenSettingsResponse(record)).to.include({ token_num_uses: 3, num_uses: 3 });
    const rewritten = { ...record, legacy: { ...record.legacy } };
    applyTokenFields({ data: {} } as unknown as LogicalRequest, { token_num_uses: 4 }, rewritten, MAX_LEASE_TTL);
    expect(tokenSettingsResponse(rewritten)).to.include({ token_num_uses: 4 }).and.not.have.property('num_uses');
  });

  it('refuses a negative use count, naming the field that was sent', () => {
    expect(() => apply({ token_num_uses: -1 })).to.throw("'token_num_uses' cannot be negative");
    expect(() => apply({ num_uses: -1 })).to.throw("'num_uses' cannot be negative");
  });

  it('sanitises the deprecated policies as the built-in methods do, and keeps them as given under the plugins\' rules', () => {
    expect(apply({ policies: ['Dev', 'admin', 'dev'] }).record.token_policies).to.deep.equal(['admin', 'dev']);
    expect(apply({ policies: ['Dev', 'admin'] }, PLUGIN_TOKEN_FIELD_RULES).record.token_policies).to.deep.equal(['Dev', 'admin']);
  });

  it("words a period and a maximum TTL above the mount's as the method does in Vault", () => {
    expect(() => apply({ token_period: 7200 })).to.throw('period of "7200s" is greater than the backend\'s maximum lease TTL of "3600s"');
    expect(() => apply({ token_period: 7200 }, PLUGIN_TOKEN_FIELD_RULES)).to.throw(`'token_period' of "7200s" is greater than the backend's maximum lease TTL of "3600s"`);
    expect(apply({ token_max_ttl: 7200 }).warnings).to.deep.equal([
      'Given max ttl of 7200 seconds greater than current mount/system default of 3600 seconds; max ttl will be capped at login time',
    ]);
    expect(apply({ token_max_ttl: 7200 }, PLUGIN_TOKEN_FIELD_RULES).warnings).to.deep.equal([
      "token max ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated",
    ]);
  });
});
