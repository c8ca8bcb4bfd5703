import { expect } from 'chai';
import { ACL } from '../../../../core/auth/policy/acl.js';
import {
  DEFAULT_POLICY,
  DEFAULT_POLICY_NAME,
  RESERVED_POLICY_NAMES,
  RESPONSE_WRAPPING_POLICY,
  RESPONSE_WRAPPING_POLICY_NAME,
  ROOT_POLICY_NAME,
} from '../../../../core/auth/policy/builtin.js';
import { parsePolicy } from '../../../../core/auth/policy/policy.js';

describe('built-in policies', () => {
  describe('default', () => {
    const policy = parsePolicy(DEFAULT_POLICY_NAME, DEFAULT_POLICY);
    const acl = new ACL([policy], { entityId: 'e-1', entityName: 'alice' });

    it('grants a token what it needs about itself, on the paths Keywarden serves', () => {
      const table: [path: string, capabilities: string[]][] = [
        ['auth/token/lookup-self', ['read']],
        ['auth/token/renew-self', ['update']],
        ['auth/token/revoke-self', ['update']],
        ['sys/capabilities-self', ['update']],
        ['identity/entity/id/e-1', ['read']],
        ['cubbyhole/anything', ['create', 'delete', 'list', 'read', 'update']],
        ['cubbyhole/', ['create', 'delete', 'list', 'read', 'update']],
        ['sys/wrapping/wrap', ['update']],
        ['sys/wrapping/lookup', ['update']],
        ['sys/wrapping/unwrap', ['update']],
      ];
      expect(table.map(([path]) => [path, acl.capabilities(path)])).to.deep.equal(table);
    });

    it('grants nothing else', () => {
      for (const path of ['auth/token/create', 'identity/entity/id/e-2', 'identity/entity/name/alice', 'sys/mounts', 'sys/leases/lookup', 'sys/wrapping/rewrap', 'sys/tools/random', 'identity/oidc/provider/p/authorize', 'secret/x', 'sys/policy/default']) {
        expect(acl.capabilities(path), path).to.deep.equal(['deny']);
      }
    });

    it('leaves out the identity paths for a token without an entity', () => {
      const noEntity = new ACL([policy]);
      expect(noEntity.capabilities('identity/entity/id/')).to.deep.equal(['deny']);
      expect(noEntity.capabilities('auth/token/lookup-self')).to.deep.equal(['read']);
    });
  });

  it('response-wrapping lets a wrapping token read its response and unwrap', () => {
    const acl = new ACL([parsePolicy(RESPONSE_WRAPPING_POLICY_NAME, RESPONSE_WRAPPING_POLICY)]);
    expect(acl.capabilities('cubbyhole/response')).to.deep.equal(['create', 'read']);
    expect(acl.capabilities('sys/wrapping/unwrap')).to.deep.equal(['update']);
    expect(acl.capabilities('cubbyhole/other')).to.deep.equal(['deny']);
  });

  it('reserves root, response-wrapping and control-group (as Vault does), but not default', () => {
    expect(ROOT_POLICY_NAME).to.equal('root');
    expect([...RESERVED_POLICY_NAMES].sort()).to.deep.equal(['control-group', 'response-wrapping', 'root']);
    expect(RESERVED_POLICY_NAMES.has(DEFAULT_POLICY_NAME)).to.equal(false);
  });
});
