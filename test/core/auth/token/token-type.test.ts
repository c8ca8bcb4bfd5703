/**
 * The one rule for the type of an issued token (core/auth/token/token-type.ts), checked against
 * the table OpenBao's router applies to every login: a mount's `service` or `batch` tune fixes the
 * type; a `default-…` tune (or none, which is `default-service`) gives way to what the role asks.
 */
import { expect } from 'chai';
import { issuedTokenType, type AskedTokenType, type TokenTypeSetting } from '../../../../core/auth/token/token-type.js';

const SETTINGS: readonly (TokenTypeSetting | undefined)[] = [undefined, 'default-service', 'default-batch', 'service', 'batch'];
const ASKED: readonly AskedTokenType[] = ['default', 'service', 'batch'];

describe('the type of an issued token', () => {
  it("follows Vault's table for every tune and every type a role asks for", () => {
    const table = Object.fromEntries(SETTINGS.map((setting) => [setting ?? 'unset', Object.fromEntries(ASKED.map((asked) => [asked, issuedTokenType(setting, asked)]))]));
    expect(table).to.deep.equal({
      unset: { default: 'service', service: 'service', batch: 'batch' },
      'default-service': { default: 'service', service: 'service', batch: 'batch' },
      'default-batch': { default: 'batch', service: 'service', batch: 'batch' },
      service: { default: 'service', service: 'service', batch: 'service' },
      batch: { default: 'batch', service: 'batch', batch: 'batch' },
    });
  });

  it('gives a role that asks for batch tokens batch tokens on a default-service mount, and one that asks for service tokens service tokens on a default-batch mount', () => {
    // The two cases where the standby's guess from the tune alone and the login's answer differ:
    // the standby now makes its guess with this function, for a role that asks for no type.
    expect(issuedTokenType('default-service', 'batch')).to.equal('batch');
    expect(issuedTokenType('default-service', 'default')).to.equal('service');
    expect(issuedTokenType('default-batch', 'service')).to.equal('service');
    expect(issuedTokenType('default-batch', 'default')).to.equal('batch');
  });
});
