/**
 * The built-in default policy grants only paths that exist: every path it names has a handler, so
 * a grant can never silently start to mean something when a route is added later.
 */
import { expect } from 'chai';
import { DEFAULT_POLICY } from '../../../../core/auth/policy/builtin.js';
import { parsePolicy } from '../../../../core/auth/policy/policy.js';
import { startUnsealedServer } from '../../../helpers/server.js';

/** A concrete path a rule's pattern matches: templates and `+` become a segment, a trailing `*` a name. */
function concrete(pattern: string): string {
  return pattern.replace(/\{\{[^}]+\}\}/g, 'some-id').replace(/\+/g, 'segment').replace(/\*$/, 'name');
}

describe('built-in default policy', function () {
  this.timeout(20_000);

  it('grants only paths that have a handler', async () => {
    const server = await startUnsealedServer();
    try {
      const rules = parsePolicy('default', DEFAULT_POLICY).rules;
      expect(rules.length).to.be.greaterThan(0);
      const missing: string[] = [];
      for (const rule of rules) {
        const res = await server.client.get(`${concrete(rule.path)}?help=1`);
        if (res.status !== 200) missing.push(`${rule.path} (${res.status})`);
      }
      expect(missing, 'default policy paths without a handler').to.deep.equal([]);
    } finally {
      await server.close();
    }
  });

  it('is what a fresh server stores as "default"', async () => {
    const server = await startUnsealedServer();
    try {
      const stored = await server.client.get('sys/policies/acl/default');
      expect(stored.body.data.policy).to.equal(DEFAULT_POLICY);
    } finally {
      await server.close();
    }
  });
});
