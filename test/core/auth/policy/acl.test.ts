import { expect } from 'chai';
import fc from 'fast-check';
import { InternalError } from '../../../../core/errors.js';
import type { Operation } from '../../../../core/framework/request.js';
import { ACL, type IdentityContext } from '../../../../core/auth/policy/acl.js';
import { parsePolicy } from '../../../../core/auth/policy/policy.js';

/** An ACL of policies named p1, p2, ... in the given order. */
function aclOf(...texts: string[]): ACL {
  return new ACL(texts.map((text, i) => parsePolicy(`p${i + 1}`, text)));
}

function allowed(acl: ACL, path: string, operation: Operation, data?: Record<string, unknown>): boolean {
  return acl.allowOperation({ path, operation, ...(data ? { data } : {}) }).allowed;
}

type Row = [path: string, operation: Operation, expected: boolean];

function expectDecisions(acl: ACL, rows: readonly Row[]): void {
  const actual = rows.map(([path, operation]) => [path, operation, allowed(acl, path, operation)]);
  expect(actual).to.deep.equal(rows);
}

describe('ACL', () => {
  describe('grantsUnder (what sys/internal/ui/mounts checks)', () => {
    it('is true when a rule grants something on the mount or any path under it, by exact, prefix or "+" rule', () => {
      expect(aclOf('path "kv/data/app/db" { capabilities = ["read"] }').grantsUnder('kv/')).to.equal(true);
      expect(aclOf('path "kv/data/*" { capabilities = ["list"] }').grantsUnder('kv/')).to.equal(true);
      expect(aclOf('path "kv*" { capabilities = ["read"] }').grantsUnder('kv/')).to.equal(true);
      expect(aclOf('path "kv/+/app" { capabilities = ["update"] }').grantsUnder('kv/')).to.equal(true);
      expect(aclOf('path "+/data/x" { capabilities = ["read"] }').grantsUnder('kv/')).to.equal(true);
      expect(ACL.root().grantsUnder('anything/')).to.equal(true);
    });

    it('is false for rules elsewhere and rules that deny', () => {
      expect(aclOf('path "other/*" { capabilities = ["read"] }').grantsUnder('kv/')).to.equal(false);
      expect(aclOf('path "kvx/*" { capabilities = ["read"] }').grantsUnder('kv/')).to.equal(false);
      expect(aclOf('path "kv/*" { capabilities = ["deny"] }').grantsUnder('kv/')).to.equal(false);
      expect(aclOf('path "secret/+/x" { capabilities = ["read"] }', 'path "secret/x" { capabilities = ["read"] }').grantsUnder('kv/')).to.equal(false);
      expect(aclOf().grantsUnder('kv/')).to.equal(false);
    });
  });

  describe('matching (https://developer.hashicorp.com/vault/docs/concepts/policies#priority-matching)', () => {
    it('denies by default: no policy, or no matching rule', () => {
      expectDecisions(aclOf(), [['secret/foo', 'read', false]]);
      expectDecisions(aclOf('path "secret/foo" { capabilities = ["read"] }'), [['secret/bar', 'read', false]]);
      expect(aclOf().capabilities('secret/foo')).to.deep.equal(['deny']);
    });

    it('uses an exact rule only for that exact path', () => {
      expectDecisions(aclOf('path "secret/foo" { capabilities = ["read"] }'), [
        ['secret/foo', 'read', true],
        ['secret/food', 'read', false],
        ['secret/foo/bar', 'read', false],
        ['secret/foo', 'update', false],
      ]);
    });

    it('prefers an exact rule over any glob (a deny carved out of a wider grant)', () => {
      const acl = aclOf(`
        path "secret/*" { capabilities = ["create", "read", "update", "patch", "delete", "list"] }
        path "secret/super-secret" { capabilities = ["deny"] }`);
      expectDecisions(acl, [
        ['secret/super-secret', 'read', false],
        ['secret/super-secret', 'delete', false],
        ['secret/other', 'read', true],
        ['secret/super-secret/child', 'read', true],
      ]);
    });

    it('treats a trailing "*" as a prefix, not a segment boundary', () => {
      const acl = aclOf(`
        path "secret/bar/*" { capabilities = ["read"] }
        path "secret/zip-*" { capabilities = ["read"] }`);
      expectDecisions(acl, [
        ['secret/bar/zip', 'read', true],
        ['secret/bar/zip/zap', 'read', true],
        ['secret/bars/zip', 'read', false],
        ['secret/zip-zap', 'read', true],
        ['secret/zip-zap/zong', 'read', true],
        ['secret/zip/zap', 'read', false],
      ]);
    });

    it('uses the longest matching prefix', () => {
      const acl = aclOf(`
        path "secret/*" { capabilities = ["read"] }
        path "secret/team-a/*" { capabilities = ["deny"] }
        path "secret/team-a/public/*" { capabilities = ["read"] }`);
      expectDecisions(acl, [
        ['secret/x', 'read', true],
        ['secret/team-a/x', 'read', false],
        ['secret/team-a/public/x', 'read', true],
      ]);
    });

    it('matches "+" against exactly one segment', () => {
      const acl = aclOf(`
        path "secret/+/teamb" { capabilities = ["read"] }
        path "secret/+/+/teamc" { capabilities = ["read"] }
        path "+/top" { capabilities = ["read"] }`);
      expectDecisions(acl, [
        ['secret/foo/teamb', 'read', true],
        ['secret//teamb', 'read', true],
        ['secret/teamb', 'read', false],
        ['secret/foo/bar/teamb', 'read', false],
        ['secret/foo/teamb/x', 'read', false],
        ['secret/foo/bar/teamc', 'read', true],
        ['secret/foo/teamc', 'read', false],
        ['anything/top', 'read', true],
      ]);
    });

    it('lets a "+" rule ending in "*" match longer paths, prefix-matching its last segment', () => {
      const acl = aclOf('path "secret/+/app*" { capabilities = ["read"] }');
      expectDecisions(acl, [
        ['secret/a/app', 'read', true],
        ['secret/a/apple/pie', 'read', true],
        ['secret/a/ap', 'read', false],
        ['secret/app', 'read', false],
      ]);
    });

    it('applies only the single highest-priority rule, never a union of different patterns', () => {
      const acl = aclOf(
        'path "secret/*" { capabilities = ["read"] }',
        'path "secret/app/*" { capabilities = ["update"] }',
      );
      expectDecisions(acl, [
        ['secret/app/x', 'update', true],
        ['secret/app/x', 'read', false],
        ['secret/other', 'read', true],
      ]);
    });

    it('lets an empty rule shadow a wider grant', () => {
      const acl = aclOf('path "secret/*" { capabilities = ["read"] }\npath "secret/locked" {}');
      expectDecisions(acl, [['secret/locked', 'read', false], ['secret/open', 'read', true]]);
      expect(acl.capabilities('secret/locked')).to.deep.equal(['deny']);
    });

    describe('ranks competing "+" and "*" matches', () => {
      // Each case: two rules that both match the path; the winner grants read, the loser denies.
      // Listing the rules in both orders shows the result does not depend on order.
      const table: { rule: string; winner: string; loser: string; path: string }[] = [
        { rule: '(a) a wildcard appearing later wins, a "*" after a "+"', winner: 'a/b/*', loser: 'a/+/c', path: 'a/b/c' },
        { rule: '(a) a wildcard appearing later wins, a "+" after a "*"', winner: 'a/b/+', loser: 'a/*', path: 'a/b/c' },
        { rule: '(b) at the same place, a rule without "*" beats a prefix glob', winner: 'secret/+/teamb', loser: 'secret/*', path: 'secret/x/teamb' },
        { rule: '(b) ... also between two "+" rules', winner: 'a/+/bc', loser: 'a/+/b*', path: 'a/x/bc' },
        { rule: '(c) fewer "+" segments win', winner: 'a/+/b/c', loser: 'a/+/+/c', path: 'a/x/b/c' },
        { rule: '(c) the documented example: secret/* beats secret/+/+/foo/*', winner: 'secret/*', loser: 'secret/+/+/foo/*', path: 'secret/a/b/foo/c' },
        { rule: '(d) the longer path wins', winner: 'a/+/bc*', loser: 'a/+/b*', path: 'a/x/bcd' },
        { rule: '(e) the lexicographically larger path wins', winner: '+/a/+', loser: '+/+/b', path: 'x/a/b' },
      ];
      for (const row of table) {
        it(row.rule, () => {
          const winner = `path "${row.winner}" { capabilities = ["read"] }`;
          const loser = `path "${row.loser}" { capabilities = ["deny"] }`;
          expect(allowed(aclOf(`${winner}\n${loser}`), row.path, 'read'), 'winner first').to.equal(true);
          expect(allowed(aclOf(`${loser}\n${winner}`), row.path, 'read'), 'loser first').to.equal(true);
          expect(allowed(aclOf(loser, winner), row.path, 'read'), 'separate policies').to.equal(true);
        });
      }

      it('counts the first "+" character even inside a literal segment, as Vault does', () => {
        // "a+b/+" is a "+" rule whose first "+" is at index 1, so "a+b/*" (glob at 4) outranks it.
        const acl = aclOf('path "a+b/+" { capabilities = ["deny"] }\npath "a+b/*" { capabilities = ["read"] }');
        expect(allowed(acl, 'a+b/c', 'read')).to.equal(true);
      });
    });

    describe('list requests and the trailing slash', () => {
      it('let an exact rule without the slash grant list on the path with it', () => {
        const acl = aclOf('path "auth/approle/role" { capabilities = ["list"] }');
        expectDecisions(acl, [
          ['auth/approle/role/', 'list', true],
          ['auth/approle/role', 'list', true],
          ['auth/approle/role/', 'read', false],
        ]);
      });

      it('retry the wildcard rules without the slash when nothing matched with it', () => {
        const acl = aclOf('path "+/sys/policies/acl" { capabilities = ["list"] }\npath "kv/+" { capabilities = ["list"] }');
        expectDecisions(acl, [
          ['ns1/sys/policies/acl/', 'list', true],
          ['kv/team/', 'list', true],
          ['kv/team/', 'read', false],
        ]);
        expect(acl.capabilities('kv/team/')).to.deep.equal(['list']);
      });

      it('prefer a rule matching the path with the slash (a deny on a sub-tree is not bypassed)', () => {
        const acl = aclOf(`
          path "foo/metadata/*" { capabilities = ["list"] }
          path "foo/metadata/private/*" { capabilities = ["deny"] }`);
        expectDecisions(acl, [
          ['foo/metadata/private/', 'list', false],
          ['foo/metadata/private/app/', 'list', false],
          ['foo/metadata/public/', 'list', true],
        ]);
      });

      it('prefer an exact rule with the slash over one without', () => {
        const acl = aclOf('path "kv/a/" { capabilities = ["deny"] }\npath "kv/a" { capabilities = ["list"] }');
        expectDecisions(acl, [['kv/a/', 'list', false], ['kv/a', 'list', true]]);
      });
    });

    it('ignores leading slashes on the request path', () => {
      expectDecisions(aclOf('path "/secret/foo" { capabilities = ["read"] }'), [['//secret/foo', 'read', true]]);
    });

    it('maps each operation to its own capability', () => {
      const operations: Operation[] = ['read', 'list', 'create', 'update', 'delete', 'patch'];
      for (const granted of operations) {
        const acl = aclOf(`path "p" { capabilities = ["${granted}"] }`);
        const allowedOperations = operations.filter((operation) => allowed(acl, 'p', operation));
        expect(allowedOperations, granted).to.deep.equal([granted]);
      }
    });
  });

  describe('merging the same pattern across policies', () => {
    it('ORs capabilities and reports which policies granted the operation', () => {
      const acl = aclOf(
        'path "secret/*" { capabilities = ["read"] }',
        'path "secret/*" { capabilities = ["update", "read"] }',
      );
      expect(acl.allowOperation({ path: 'secret/x', operation: 'read' }).grantingPolicies).to.deep.equal(['p1', 'p2']);
      expect(acl.allowOperation({ path: 'secret/x', operation: 'update' }).grantingPolicies).to.deep.equal(['p2']);
      expect(acl.capabilities('secret/x')).to.deep.equal(['read', 'update']);
    });

    it('lets a deny in any policy win, in either order', () => {
      const grant = 'path "secret/*" { capabilities = ["read", "sudo"] }';
      const deny = 'path "secret/*" { capabilities = ["deny"] }';
      for (const acl of [aclOf(grant, deny), aclOf(deny, grant)]) {
        expect(acl.allowOperation({ path: 'secret/x', operation: 'read' })).to.deep.include({ allowed: false, sudo: false, grantingPolicies: [] });
        expect(acl.capabilities('secret/x')).to.deep.equal(['deny']);
      }
    });

    it('merges allowed values; an empty list (any value) wins', () => {
      const twoLists = aclOf(
        'path "p" { capabilities = ["update"]\n allowed_parameters = { x = ["1"] } }',
        'path "p" { capabilities = ["update"]\n allowed_parameters = { x = ["2"] } }',
      );
      expect(['1', '2', '3'].map((x) => allowed(twoLists, 'p', 'update', { x }))).to.deep.equal([true, true, false]);
      const anyValue = aclOf(
        'path "p" { capabilities = ["update"]\n allowed_parameters = { x = ["1"] } }',
        'path "p" { capabilities = ["update"]\n allowed_parameters = { x = [] } }',
      );
      expect(allowed(anyValue, 'p', 'update', { x: '3' })).to.equal(true);
    });

    it('merges denied values and unions required parameters', () => {
      const acl = aclOf(
        'path "p" { capabilities = ["update"]\n denied_parameters = { x = ["1"] }\n required_parameters = ["a"] }',
        'path "p" { capabilities = ["update"]\n denied_parameters = { x = ["2"] }\n required_parameters = ["b"] }',
      );
      expect(allowed(acl, 'p', 'update', { a: 1, b: 1, x: '1' })).to.equal(false);
      expect(allowed(acl, 'p', 'update', { a: 1, b: 1, x: '2' })).to.equal(false);
      expect(allowed(acl, 'p', 'update', { a: 1, b: 1, x: '3' })).to.equal(true);
      expect(allowed(acl, 'p', 'update', { a: 1, x: '3' })).to.equal(false);
    });

    it('keeps the lower wrapping TTL bound, and refuses when merged bounds cannot be met', () => {
      const lower = aclOf('path "p" { capabilities = ["read"]\n max_wrapping_ttl = 100 }', 'path "p" { capabilities = ["read"]\n max_wrapping_ttl = 50 }');
      expect([40, 60].map((wrapTtl) => lower.allowOperation({ path: 'p', operation: 'read', wrapTtl }).allowed)).to.deep.equal([true, false]);
      const impossible = aclOf('path "p" { capabilities = ["read"]\n min_wrapping_ttl = 100 }', 'path "p" { capabilities = ["read"]\n max_wrapping_ttl = 50 }');
      expect([10, 75, 200].map((wrapTtl) => impossible.allowOperation({ path: 'p', operation: 'read', wrapTtl }).allowed)).to.deep.equal([false, false, false]);
    });
  });

  describe('sudo and root', () => {
    it('reports sudo from the rule that applies, and never through a deny', () => {
      const acl = aclOf(`
        path "sys/audit/*" { capabilities = ["update", "sudo"] }
        path "sys/mounts/*" { capabilities = ["update"] }`);
      expect(acl.allowOperation({ path: 'sys/audit/file', operation: 'update' })).to.deep.equal({ allowed: true, sudo: true, grantingPolicies: ['p1'] });
      expect(acl.allowOperation({ path: 'sys/audit/file', operation: 'read' })).to.deep.include({ allowed: false, sudo: true });
      expect(acl.allowOperation({ path: 'sys/mounts/x', operation: 'update' }).sudo).to.equal(false);
    });

    it('gives the root ACL everything, with sudo, and ["root"] as capabilities', () => {
      const root = ACL.root();
      expect(root.allowOperation({ path: 'sys/audit/x', operation: 'delete', data: { anything: 1 } })).to.deep.equal({
        allowed: true, sudo: true, grantingPolicies: ['root'],
      });
      expect(root.capabilities('anything')).to.deep.equal(['root']);
      expect(new ACL([parsePolicy('root', '')]).capabilities('x')).to.deep.equal(['root']);
    });

    it('refuses to combine root with other policies', () => {
      expect(() => new ACL([parsePolicy('root', ''), parsePolicy('default', '')])).to.throw(InternalError, 'other policies present along with root');
    });
  });

  it('reports capabilities sorted, and deny for an explicit deny', () => {
    const acl = aclOf('path "a" { capabilities = ["update", "sudo", "create", "read", "list", "patch", "delete"] }\npath "b" { capabilities = ["deny"] }');
    expect(acl.capabilities('a')).to.deep.equal(['create', 'delete', 'list', 'patch', 'read', 'sudo', 'update']);
    expect(acl.capabilities('/a')).to.deep.equal(acl.capabilities('a'));
    expect(acl.capabilities('b')).to.deep.equal(['deny']);
  });

  describe('parameter constraints (https://developer.hashicorp.com/vault/docs/concepts/policies#parameter-constraints)', () => {
    const rule = (body: string): ACL => aclOf(`path "secret/foo" {\n capabilities = ["create", "read", "update", "patch", "delete", "list"]\n ${body}\n}`);
    type ParameterRow = [description: string, data: Record<string, unknown> | undefined, expected: boolean];
    const check = (acl: ACL, rows: readonly ParameterRow[], operation: Operation = 'create'): void => {
      const actual = rows.map(([description, data]) => [description, data, allowed(acl, 'secret/foo', operation, data)]);
      expect(actual).to.deep.equal(rows);
    };

    it('required_parameters: every one must be present, compared in lower case', () => {
      check(rule('required_parameters = ["bar", "Baz"]'), [
        ['both present', { bar: 1, baz: 2 }, true],
        ['one missing', { bar: 1 }, false],
        ['no data', undefined, false],
        ['upper-case data key does not count', { bar: 1, Baz: 2 }, false],
      ]);
    });

    it('apply only to read, create, update and patch', () => {
      const acl = rule('required_parameters = ["bar"]\n denied_parameters = { "*" = [] }');
      const operations: Operation[] = ['read', 'create', 'update', 'patch', 'delete', 'list'];
      expect(operations.map((operation) => allowed(acl, 'secret/foo', operation, { x: 1 }))).to.deep.equal([false, false, false, false, true, true]);
    });

    it('allow a request without data once the required ones are satisfied', () => {
      check(rule('allowed_parameters = { "bar" = ["zip"] }\n denied_parameters = { "*" = [] }'), [
        ['no data', undefined, true],
        ['empty data', {}, true],
        ['any data', { bar: 'zip' }, false],
      ]);
    });

    it('denied_parameters: "*" denies any data', () => {
      check(rule('denied_parameters = { "*" = [] }'), [['one key', { a: 1 }, false], ['no data', undefined, true]]);
    });

    it('denied_parameters: an empty list denies the key with any value, other keys pass', () => {
      check(rule('denied_parameters = { "bar" = [] }'), [
        ['bar', { bar: 'x' }, false],
        ['bar, other case', { BAR: 'x' }, false],
        ['other key', { baz: 'x' }, true],
      ]);
    });

    it('denied_parameters: listed values, with globs at the start or the end', () => {
      check(rule('denied_parameters = { "bar" = ["zip", "za*", "*-prod", "*secret*"] }'), [
        ['exact', { bar: 'zip' }, false],
        ['prefix glob', { bar: 'zap' }, false],
        ['suffix glob', { bar: 'eu-prod' }, false],
        ['contains glob', { bar: 'my-secret-thing' }, false],
        ['no match', { bar: 'zoo' }, true],
        ['a list with a denied element', { bar: ['ok', 'zip'] }, false],
        ['a comma-separated string with a denied item', { bar: 'ok, zip' }, false],
        ['a list of allowed items', { bar: ['ok', 'fine'] }, true],
      ]);
    });

    it('denied_parameters take precedence over allowed_parameters', () => {
      check(rule('allowed_parameters = { "bar" = [] }\n denied_parameters = { "bar" = ["zip"] }'), [
        ['denied value', { bar: 'zip' }, false],
        ['other value', { bar: 'zap' }, true],
      ]);
    });

    it('compare policy-name parameters in lower case, so ROOT does not slip past root', () => {
      check(rule('denied_parameters = { "policies" = ["root"] }'), [
        ['ROOT', { policies: 'ROOT' }, false],
        ['a list with Root', { policies: ['default', 'Root'] }, false],
        ['comma string', { policies: 'default,root' }, false],
        ['harmless', { policies: 'default' }, true],
      ]);
    });

    it('allowed_parameters: unlisted keys are refused, listed keys take listed values', () => {
      check(rule('allowed_parameters = { "foo" = [], "bar" = ["zip", "zap"] }'), [
        ['foo, any value', { foo: 'anything' }, true],
        ['bar, listed value', { bar: 'zap' }, true],
        ['bar, other value', { bar: 'zop' }, false],
        ['unlisted key', { baz: 1 }, false],
        ['listed and unlisted', { foo: 1, baz: 1 }, false],
        ['key in another case', { BAR: 'zip' }, true],
        ['a list of listed values', { bar: ['zip', 'zap'] }, true],
        ['a list with another value', { bar: ['zip', 'zop'] }, false],
        ['a comma-separated string of listed values', { bar: 'zip,zap' }, true],
      ]);
    });

    it('allowed_parameters: "*" = [] lets other keys through while listed keys stay restricted', () => {
      check(rule('allowed_parameters = { "bar" = ["zip", "zap"], "*" = [] }'), [
        ['other key', { baz: 1 }, true],
        ['bar listed', { bar: 'zip' }, true],
        ['bar other', { bar: 'zop' }, false],
      ]);
    });

    it('allowed_parameters: "*" alone allows everything', () => {
      check(rule('allowed_parameters = { "*" = [] }'), [['anything', { a: 1, b: [2] }, true]]);
    });

    it('allowed_parameters: globs at the start or the end; a lone "*" value matches only "*"', () => {
      check(rule('allowed_parameters = { "bar" = ["foo-*"], "baz" = ["*"] }'), [
        ['prefix glob', { bar: 'foo-1' }, true],
        ['no prefix', { bar: 'bar-1' }, false],
        ['lone star against a word', { baz: 'word' }, false],
        ['lone star against a star', { baz: '*' }, true],
      ]);
    });

    it('allowed_parameters: numbers, booleans and null compare by value, not as strings', () => {
      check(rule('allowed_parameters = { "n" = [1, true] }'), [
        ['number', { n: 1 }, true],
        ['boolean', { n: true }, true],
        ['string of the number', { n: '1' }, false],
        ['null', { n: null }, false],
      ]);
    });

    it('ignore the data of a list or delete request', () => {
      check(rule('allowed_parameters = { "a" = [] }'), [['unlisted key', { b: 1 }, true]], 'delete');
    });
  });

  describe('wrapping TTL bounds', () => {
    const acl = aclOf('path "auth/approle/role/my-role/secret-id" {\n capabilities = ["create", "update"]\n min_wrapping_ttl = "1s"\n max_wrapping_ttl = "90s"\n}');
    const table: [wrapTtl: number | undefined, expected: boolean][] = [[undefined, false], [1, true], [90, true], [91, false]];
    for (const [wrapTtl, expected] of table) {
      it(`${expected ? 'allow' : 'refuse'} a request wrapped ${wrapTtl === undefined ? 'not at all' : `for ${wrapTtl}s`}`, () => {
        const request = { path: 'auth/approle/role/my-role/secret-id', operation: 'update' as const, ...(wrapTtl === undefined ? {} : { wrapTtl }) };
        expect(acl.allowOperation(request).allowed).to.equal(expected);
      });
    }
  });

  describe('templated paths', () => {
    const identity: IdentityContext = {
      entityId: 'e-123',
      entityName: 'alice',
      entityMetadata: { team: 'blue', empty: '' },
      aliases: {
        auth_kubernetes_xxxx: { id: 'al-1', name: 'sa-app', metadata: { service_account_namespace: 'payments' }, customMetadata: { org: 'acme' } },
      },
    };
    const table: { template: string; path: string }[] = [
      { template: 'secret/data/{{identity.entity.id}}/*', path: 'secret/data/e-123/x' },
      { template: 'secret/data/{{ identity.entity.name }}', path: 'secret/data/alice' },
      { template: 'secret/data/{{identity.entity.metadata.team}}/+', path: 'secret/data/blue/x' },
      { template: 'secret/{{identity.entity.metadata.empty}}/x', path: 'secret//x' },
      { template: 'secret/data/{{identity.entity.aliases.auth_kubernetes_xxxx.metadata.service_account_namespace}}/*', path: 'secret/data/payments/db' },
      { template: 'k/{{identity.entity.aliases.auth_kubernetes_xxxx.name}}/{{identity.entity.aliases.auth_kubernetes_xxxx.id}}', path: 'k/sa-app/al-1' },
      { template: 'k/{{identity.entity.aliases.auth_kubernetes_xxxx.custom_metadata.org}}', path: 'k/acme' },
    ];
    for (const row of table) {
      it(`render ${row.template}`, () => {
        const acl = new ACL([parsePolicy('t', `path "${row.template}" { capabilities = ["read"] }`)], identity);
        expect(allowed(acl, row.path, 'read')).to.equal(true);
        expect(allowed(acl, `${row.path}/other`, 'read')).to.equal(row.template.endsWith('*'));
      });
    }

    it('leave out a path whose template cannot be rendered, so it shadows nothing', () => {
      const policy = parsePolicy('t', `
        path "secret/*" { capabilities = ["read"] }
        path "secret/{{identity.entity.metadata.missing}}" { capabilities = ["deny"] }
        path "secret/{{identity.entity.aliases.auth_other.name}}" { capabilities = ["deny"] }
        path "secret/{{identity.groups.names.ops.id}}" { capabilities = ["deny"] }`);
      expect(allowed(new ACL([policy], identity), 'secret/', 'read')).to.equal(true);
      expect(allowed(new ACL([policy]), 'secret/', 'read')).to.equal(true);
      expect(allowed(new ACL([policy], {}), 'secret/', 'read')).to.equal(true);
    });

    it('leave out a path whose rendered value contains a wildcard', () => {
      const policy = parsePolicy('t', 'path "secret/{{identity.entity.name}}" { capabilities = ["read"] }');
      for (const entityName of ['*', 'a*', '+', 'a+b']) {
        const acl = new ACL([policy], { entityName });
        expect(acl.capabilities(`secret/${entityName}`), entityName).to.deep.equal(['deny']);
        expect(acl.capabilities('secret/anything'), entityName).to.deep.equal(['deny']);
      }
    });

    it('render per identity: each caller gets their own path', () => {
      const policy = parsePolicy('t', 'path "secret/data/{{identity.entity.id}}/*" { capabilities = ["read"] }');
      const alice = new ACL([policy], { entityId: 'alice-id' });
      const bob = new ACL([policy], { entityId: 'bob-id' });
      expect([allowed(alice, 'secret/data/alice-id/x', 'read'), allowed(alice, 'secret/data/bob-id/x', 'read')]).to.deep.equal([true, false]);
      expect([allowed(bob, 'secret/data/alice-id/x', 'read'), allowed(bob, 'secret/data/bob-id/x', 'read')]).to.deep.equal([false, true]);
    });

    it('merge a rendered path with the same literal path of another policy', () => {
      const acl = new ACL([
        parsePolicy('t', 'path "secret/{{identity.entity.name}}" { capabilities = ["read"] }'),
        parsePolicy('u', 'path "secret/alice" { capabilities = ["update"] }'),
      ], identity);
      expect(acl.capabilities('secret/alice')).to.deep.equal(['read', 'update']);
    });
  });

  describe('agrees with a direct reading of the precedence rules', () => {
    // A model written straight from Vault's priority-matching rules: scan every rule, no indexes. The ACL's
    // compiled lookup (exact map, prefix lengths, "+" rules bucketed by segment count) must agree.
    interface ModelRule { pattern: string; capabilities: string[] }
    const isSegmentRule = (p: string): boolean => p === '+' || p.startsWith('+/') || p.includes('/+');
    function modelCandidates(rules: readonly ModelRule[], path: string): { rank: [number, number, number, number, string]; rule: ModelRule }[] {
      const out: { rank: [number, number, number, number, string]; rule: ModelRule }[] = [];
      const prefixes = rules.filter((r) => !isSegmentRule(r.pattern) && r.pattern.endsWith('*') && path.startsWith(r.pattern.slice(0, -1)));
      prefixes.sort((a, b) => b.pattern.length - a.pattern.length);
      if (prefixes[0]) {
        const p = prefixes[0].pattern.slice(0, -1);
        out.push({ rank: [p.length, 0, 0, p.length, p], rule: prefixes[0] });
      }
      const parts = path.split('/');
      for (const rule of rules.filter((r) => isSegmentRule(r.pattern))) {
        const isPrefix = rule.pattern.endsWith('*');
        const body = isPrefix ? rule.pattern.slice(0, -1) : rule.pattern;
        const segs = body.split('/');
        if (parts.length < segs.length || (!isPrefix && parts.length !== segs.length)) continue;
        const ok = segs.every((s, i) => s === '+' || s === parts[i] || (isPrefix && i === segs.length - 1 && parts[i]!.startsWith(s)));
        // Rank tuple, larger is better: first wildcard, not-prefix, fewer "+", length, text.
        if (ok) out.push({ rank: [rule.pattern.indexOf('+'), isPrefix ? 0 : 1, -segs.filter((s) => s === '+').length, body.length, body], rule });
      }
      return out;
    }
    function modelBest(rules: readonly ModelRule[], path: string): ModelRule | undefined {
      const candidates = modelCandidates(rules, path);
      candidates.sort((a, b) => {
        for (let i = 0; i < 5; i++) {
          if (a.rank[i] !== b.rank[i]) return a.rank[i]! < b.rank[i]! ? 1 : -1;
        }
        return 0;
      });
      return candidates[0]?.rule;
    }
    function modelCapabilities(rules: readonly ModelRule[], path: string): string[] {
      const exact = rules.find((r) => r.pattern === path) ?? rules.find((r) => r.pattern === path.replace(/\/$/, ''));
      const rule = exact ?? modelBest(rules, path) ?? (path.endsWith('/') ? modelBest(rules, path.slice(0, -1)) : undefined);
      if (!rule || rule.capabilities.includes('deny') || rule.capabilities.length === 0) return ['deny'];
      return [...rule.capabilities].sort();
    }

    const segment = fc.constantFrom('a', 'b', 'ab', '+', '');
    const pattern = fc.tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.constantFrom('', '*', 'b*'))
      .map(([segments, tail]) => segments.join('/') + tail)
      .filter((p) => !p.includes('+*'));
    /** The policy parser strips one leading slash from a rule path. */
    const normalized = (p: string): string => p.replace(/^\//, '');
    const capabilitySet = fc.subarray(['read', 'list', 'update', 'deny'], { minLength: 0 });
    const requestPath = fc.array(fc.constantFrom('a', 'b', 'ab', 'abc', 'x', ''), { minLength: 1, maxLength: 5 }).map((s) => s.join('/'));

    it('for random rule sets and paths', () => {
      fc.assert(
        fc.property(fc.uniqueArray(fc.record({ pattern, capabilities: capabilitySet }), { selector: (r) => normalized(r.pattern), maxLength: 8 }), fc.array(requestPath, { minLength: 1, maxLength: 10 }), (rules, paths) => {
          const text = rules.map((r) => `path "${r.pattern}" { capabilities = ${JSON.stringify(r.capabilities)} }`).join('\n');
          const acl = aclOf(text);
          for (const path of paths) {
            const requestPath = path.replace(/^\/+/, '');
            expect(acl.capabilities(path), `${path} under\n${text}`).to.deep.equal(modelCapabilities(rules.map((r) => ({ ...r, pattern: normalized(r.pattern) })), requestPath));
          }
        }),
        { numRuns: 300 },
      );
    });
  });

  it('decides quickly with hundreds of rules', () => {
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      lines.push(`path "secret/app-${i}/*" { capabilities = ["read"] }`);
      lines.push(`path "kv/+/team-${i}/config" { capabilities = ["read", "update"] }`);
      lines.push(`path "transit/encrypt/key-${i}" { capabilities = ["update"] }`);
    }
    const acl = aclOf(lines.join('\n'));
    const start = process.hrtime.bigint();
    let granted = 0;
    for (let i = 0; i < 20_000; i++) {
      if (allowed(acl, `kv/x/team-${i % 400}/config`, 'update')) granted++;
      if (allowed(acl, `secret/app-${i % 400}/db`, 'read')) granted++;
    }
    const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
    expect(granted).to.equal(2 * 15_000);
    expect(elapsedMs).to.be.below(2000);
  });
});
