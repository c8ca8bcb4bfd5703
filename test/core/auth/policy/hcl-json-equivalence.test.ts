import { expect } from 'chai';
import fc from 'fast-check';
import type { Operation } from '../../../../core/framework/request.js';
import { ACL, type AclDecision, type IdentityContext } from '../../../../core/auth/policy/acl.js';
import { parsePolicy, type PathRule } from '../../../../core/auth/policy/policy.js';

/**
 * Acceptance: the same policy written in HCL and in JSON yields the same decisions. The examples
 * are those of Vault's policy documentation (developer.hashicorp.com/vault/docs/concepts/policies),
 * each written out in both forms by hand.
 */

interface Request {
  readonly path: string;
  readonly operation: Operation;
  readonly data?: Record<string, unknown>;
  readonly wrapTtl?: number;
}

interface Example {
  readonly name: string;
  readonly hcl: string;
  readonly json: string;
  readonly identity?: IdentityContext;
  /** What the documentation says about the example, checked on the HCL form. */
  readonly documented: readonly [request: Request, allowed: boolean][];
}

const OPERATIONS: readonly Operation[] = ['read', 'list', 'create', 'update', 'delete', 'patch'];

const IDENTITY: IdentityContext = {
  entityId: 'e-1',
  entityName: 'alice',
  aliases: { auth_kubernetes_xxxx: { id: 'a-1', name: 'sa', metadata: { service_account_namespace: 'payments' } } },
};

const EXAMPLES: readonly Example[] = [
  {
    name: 'a read-only path',
    hcl: `path "secret/foo" {
  capabilities = ["read"]
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["read"]}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'read' }, true],
      [{ path: 'secret/foo', operation: 'update' }, false],
      [{ path: 'secret/foo', operation: 'delete' }, false],
    ],
  },
  {
    name: 'a broad grant with an explicit deny and restricted parameters',
    hcl: `# This section grants all access on "secret/*". Further restrictions can be
# applied to this broad policy, as shown below.
path "secret/*" {
  capabilities = ["create", "read", "update", "patch", "delete", "list"]
}

# Even though we allowed secret/*, this line explicitly denies
# secret/super-secret. This takes precedence.
path "secret/super-secret" {
  capabilities = ["deny"]
}

# Policies can also specify allowed, disallowed, and required parameters. Here
# the key "secret/restricted" can only contain "foo" (any value) and "bar" (one
# of "zip" or "zap").
path "secret/restricted" {
  capabilities = ["create"]
  allowed_parameters = {
    "foo" = []
    "bar" = ["zip", "zap"]
  }
}`,
    json: `{
  "path": {
    "secret/*": {"capabilities": ["create", "read", "update", "patch", "delete", "list"]},
    "secret/super-secret": {"capabilities": ["deny"]},
    "secret/restricted": {
      "capabilities": ["create"],
      "allowed_parameters": {"foo": [], "bar": ["zip", "zap"]}
    }
  }
}`,
    documented: [
      [{ path: 'secret/anything', operation: 'patch' }, true],
      [{ path: 'secret/super-secret', operation: 'read' }, false],
      [{ path: 'secret/restricted', operation: 'create', data: { foo: 'x', bar: 'zap' } }, true],
      [{ path: 'secret/restricted', operation: 'create', data: { bar: 'zoo' } }, false],
      [{ path: 'secret/restricted', operation: 'create', data: { baz: 1 } }, false],
    ],
  },
  {
    name: 'exact and glob paths',
    hcl: `# Permit reading only "secret/foo". An attached token cannot read "secret/food"
# or "secret/foo/bar".
path "secret/foo" {
  capabilities = ["read"]
}

# Permit reading everything under "secret/bar". An attached token could read
# "secret/bar/zip", "secret/bar/zip/zap", but not "secret/bars/zip".
path "secret/bar/*" {
  capabilities = ["read"]
}

# Permit reading everything prefixed with "zip-". An attached token could read
# "secret/zip-zap" or "secret/zip-zap/zong", but not "secret/zip/zap
path "secret/zip-*" {
  capabilities = ["read"]
}`,
    json: `{"path": {
  "secret/foo": {"capabilities": ["read"]},
  "secret/bar/*": {"capabilities": ["read"]},
  "secret/zip-*": {"capabilities": ["read"]}
}}`,
    documented: [
      [{ path: 'secret/foo', operation: 'read' }, true],
      [{ path: 'secret/food', operation: 'read' }, false],
      [{ path: 'secret/foo/bar', operation: 'read' }, false],
      [{ path: 'secret/bar/zip', operation: 'read' }, true],
      [{ path: 'secret/bar/zip/zap', operation: 'read' }, true],
      [{ path: 'secret/bars/zip', operation: 'read' }, false],
      [{ path: 'secret/zip-zap', operation: 'read' }, true],
      [{ path: 'secret/zip-zap/zong', operation: 'read' }, true],
      [{ path: 'secret/zip/zap', operation: 'read' }, false],
    ],
  },
  {
    name: 'segment wildcards',
    hcl: `# Permit reading the "teamb" path under any top-level path under secret/
path "secret/+/teamb" {
  capabilities = ["read"]
}

# Permit reading secret/foo/bar/teamb, secret/bar/foo/teamb, etc.
path "secret/+/+/teamb" {
  capabilities = ["read"]
}`,
    json: '{"path": {"secret/+/teamb": {"capabilities": ["read"]}, "secret/+/+/teamb": {"capabilities": ["read"]}}}',
    documented: [
      [{ path: 'secret/foo/teamb', operation: 'read' }, true],
      [{ path: 'secret/foo/bar/teamb', operation: 'read' }, true],
      [{ path: 'secret/bar/foo/teamb', operation: 'read' }, true],
      [{ path: 'secret/teamb', operation: 'read' }, false],
    ],
  },
  {
    name: 'a per-entity section of KV v2',
    hcl: `path "secret/data/{{identity.entity.id}}/*" {
  capabilities = ["create", "update", "patch", "read", "delete"]
}

path "secret/metadata/{{identity.entity.id}}/*" {
  capabilities = ["list"]
}`,
    json: `{"path": {
  "secret/data/{{identity.entity.id}}/*": {"capabilities": ["create", "update", "patch", "read", "delete"]},
  "secret/metadata/{{identity.entity.id}}/*": {"capabilities": ["list"]}
}}`,
    identity: IDENTITY,
    documented: [
      [{ path: 'secret/data/e-1/app', operation: 'update' }, true],
      [{ path: 'secret/data/e-2/app', operation: 'read' }, false],
      [{ path: 'secret/metadata/e-1/', operation: 'list' }, true],
    ],
  },
  {
    name: 'a group-shared section (groups are not resolved here, so nothing is granted)',
    hcl: `# In the example below, the group ID maps a group and the path
path "secret/data/groups/{{identity.groups.ids.fb036ebc-2f62-4124-9503-42aa7A869741.name}}/*" {
  capabilities = ["create", "update", "patch", "read", "delete"]
}

path "secret/metadata/groups/{{identity.groups.ids.fb036ebc-2f62-4124-9503-42aa7A869741.name}}/*" {
  capabilities = ["list"]
}`,
    json: `{"path": {
  "secret/data/groups/{{identity.groups.ids.fb036ebc-2f62-4124-9503-42aa7A869741.name}}/*": {"capabilities": ["create", "update", "patch", "read", "delete"]},
  "secret/metadata/groups/{{identity.groups.ids.fb036ebc-2f62-4124-9503-42aa7A869741.name}}/*": {"capabilities": ["list"]}
}}`,
    identity: IDENTITY,
    documented: [[{ path: 'secret/data/groups/ops/x', operation: 'read' }, false]],
  },
  {
    name: 'a path from an auth alias\'s metadata',
    hcl: `path "secret/data/{{identity.entity.aliases.auth_kubernetes_xxxx.metadata.service_account_namespace}}/*" {
  capabilities = ["read"]
}`,
    json: '{"path": {"secret/data/{{identity.entity.aliases.auth_kubernetes_xxxx.metadata.service_account_namespace}}/*": {"capabilities": ["read"]}}}',
    identity: IDENTITY,
    documented: [
      [{ path: 'secret/data/payments/db', operation: 'read' }, true],
      [{ path: 'secret/data/billing/db', operation: 'read' }, false],
    ],
  },
  {
    name: 'required parameters',
    hcl: `# This requires the user to create "secret/foo" with a parameter named
# "bar" and "baz".
path "secret/foo" {
  capabilities = ["create"]
  required_parameters = ["bar", "baz"]
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "required_parameters": ["bar", "baz"]}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { bar: 1, baz: 2 } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 1 } }, false],
    ],
  },
  {
    name: 'an allowed parameter with any value',
    hcl: `# This allows the user to create "secret/foo" with a parameter named
# "bar". It cannot contain any other parameters, but "bar" can contain
# any value.
path "secret/foo" {
  capabilities = ["create"]
  allowed_parameters = {
    "bar" = []
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "allowed_parameters": {"bar": []}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'anything' } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'x', other: 1 } }, false],
    ],
  },
  {
    name: 'an allowed parameter with listed values',
    hcl: `# This allows the user to create "secret/foo" with a parameter named
# "bar". It cannot contain any other parameters, and "bar" can only
# contain the values "zip" or "zap".
path "secret/foo" {
  capabilities = ["create"]
  allowed_parameters = {
    "bar" = ["zip", "zap"]
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "allowed_parameters": {"bar": ["zip", "zap"]}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'zip' } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'zoo' } }, false],
    ],
  },
  {
    name: 'listed values for one parameter, any others allowed',
    hcl: `# This allows the user to create "secret/foo" with a parameter named
# "bar". The parameter "bar" can only contain the values "zip" or "zap",
# but any other parameters may be created with any value.
path "secret/foo" {
  capabilities = ["create"]
  allowed_parameters = {
    "bar" = ["zip", "zap"]
    "*"   = []
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "allowed_parameters": {"bar": ["zip", "zap"], "*": []}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'zap', other: 'x' } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'zoo', other: 'x' } }, false],
    ],
  },
  {
    name: 'a globbed allowed value (and the comma surprise the documentation warns about)',
    hcl: `path "secret/foo" {
  capabilities = ["create", "update", "patch"]
  allowed_parameters = {
    "bar" = ["baz/*"]
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create", "update", "patch"], "allowed_parameters": {"bar": ["baz/*"]}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'update', data: { bar: 'baz/quux' } }, true],
      [{ path: 'secret/foo', operation: 'update', data: { bar: 'baz/quux,wibble,wobble,wubble' } }, true],
      [{ path: 'secret/foo', operation: 'update', data: { bar: 'qux/quux' } }, false],
    ],
  },
  {
    name: 'a denied parameter',
    hcl: `# This allows the user to create "secret/foo" with any parameters not
# named "bar".
path "secret/foo" {
  capabilities = ["create"]
  denied_parameters = {
    "bar" = []
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "denied_parameters": {"bar": []}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { baz: 1 } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 1 } }, false],
    ],
  },
  {
    name: 'denied parameter values',
    hcl: `# This allows the user to create "secret/foo" with a parameter named
# "bar". It can contain any other parameters, but "bar" cannot contain
# the values "zip" or "zap".
path "secret/foo" {
  capabilities = ["create"]
  denied_parameters = {
    "bar" = ["zip", "zap"]
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "denied_parameters": {"bar": ["zip", "zap"]}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'zoo', other: 1 } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'zip' } }, false],
    ],
  },
  {
    name: 'all parameters denied',
    hcl: `# This allows the user to create "secret/foo", but it cannot have any
# parameters.
path "secret/foo" {
  capabilities = ["create"]
  denied_parameters = {
    "*" = []
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "denied_parameters": {"*": []}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create' }, true],
      [{ path: 'secret/foo', operation: 'create', data: { any: 1 } }, false],
    ],
  },
  {
    name: 'a prefix-globbed allowed value',
    hcl: `# Only allow a parameter named "bar" with a value starting with "foo-*".
path "secret/foo" {
  capabilities = ["create"]
  allowed_parameters = {
    "bar" = ["foo-*"]
  }
}`,
    json: '{"path": {"secret/foo": {"capabilities": ["create"], "allowed_parameters": {"bar": ["foo-*"]}}}}',
    documented: [
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'foo-1' } }, true],
      [{ path: 'secret/foo', operation: 'create', data: { bar: 'bar-1' } }, false],
    ],
  },
  {
    name: 'required response wrapping TTLs',
    hcl: `# This effectively makes response wrapping mandatory for this path by setting min_wrapping_ttl to 1 second.
# This also sets this path's wrapped response maximum allowed TTL to 90 seconds.
path "auth/approle/role/my-role/secret-id" {
    capabilities = ["create", "update"]
    min_wrapping_ttl = "1s"
    max_wrapping_ttl = "90s"
}`,
    json: '{"path": {"auth/approle/role/my-role/secret-id": {"capabilities": ["create", "update"], "min_wrapping_ttl": "1s", "max_wrapping_ttl": "90s"}}}',
    documented: [
      [{ path: 'auth/approle/role/my-role/secret-id', operation: 'update' }, false],
      [{ path: 'auth/approle/role/my-role/secret-id', operation: 'update', wrapTtl: 60 }, true],
      [{ path: 'auth/approle/role/my-role/secret-id', operation: 'update', wrapTtl: 120 }, false],
    ],
  },
  {
    name: 'node-vault\'s legacy write policy',
    hcl: `path "secret/*" {
  policy = "write"
}`,
    json: '{"path":{"secret/*":{"policy":"write"}}}',
    documented: [
      [{ path: 'secret/x', operation: 'update' }, true],
      [{ path: 'secret/x', operation: 'patch' }, false],
    ],
  },
];

/** The requests every example is judged on, besides its documented ones. */
const SHARED_PATHS = [
  'secret/foo', 'secret/food', 'secret/foo/bar', 'secret/bar/zip', 'secret/bars/zip', 'secret/zip-zap', 'secret/zip/zap',
  'secret/super-secret', 'secret/restricted', 'secret/x/teamb', 'secret/x/y/teamb', 'secret/', 'secret/data/e-1/a',
  'secret/metadata/e-1/', 'secret/data/payments/a', 'auth/approle/role/my-role/secret-id', 'sys/mounts', '',
];
const SHARED_DATA: readonly (Record<string, unknown> | undefined)[] = [
  undefined, { bar: 'zip' }, { bar: 'zoo' }, { foo: 1 }, { bar: 'zap', baz: 2 }, { bar: ['zip', 'zap'] }, { bar: 'foo-x' },
];

function sharedRequests(): Request[] {
  const requests: Request[] = [];
  for (const path of SHARED_PATHS) {
    for (const operation of OPERATIONS) {
      for (const data of SHARED_DATA) requests.push({ path, operation, ...(data ? { data } : {}) });
    }
  }
  return requests;
}

function plainRules(rules: readonly PathRule[]): unknown[] {
  return rules.map((rule) => ({
    ...rule,
    capabilities: [...rule.capabilities].sort(),
    allowedParameters: { ...rule.allowedParameters },
    deniedParameters: { ...rule.deniedParameters },
  }));
}

function decisions(acl: ACL, requests: readonly Request[]): { decision: AclDecision; capabilities: string[] }[] {
  return requests.map((request) => ({ decision: acl.allowOperation(request), capabilities: acl.capabilities(request.path) }));
}

describe('policies in HCL and in JSON', () => {
  describe('yield the same decisions for Vault\'s documented examples', () => {
    const shared = sharedRequests();
    for (const example of EXAMPLES) {
      it(example.name, () => {
        const fromHcl = parsePolicy('example', example.hcl);
        const fromJson = parsePolicy('example', example.json);
        expect(plainRules(fromJson.rules)).to.deep.equal(plainRules(fromHcl.rules));

        const hclAcl = new ACL([fromHcl], example.identity);
        const jsonAcl = new ACL([fromJson], example.identity);
        const requests = [...example.documented.map(([request]) => request), ...shared];
        expect(decisions(jsonAcl, requests)).to.deep.equal(decisions(hclAcl, requests));

        const documented = example.documented.map(([request]) => [request, hclAcl.allowOperation(request).allowed]);
        expect(documented).to.deep.equal(example.documented);
      });
    }
  });

  describe('decide identically for random rule sets', () => {
    interface RandomRule {
      path: string;
      capabilities: string[];
      legacy: string | undefined;
      allowed: [string, unknown[]][];
      denied: [string, unknown[]][];
      required: string[];
      maxWrappingTtl: number | undefined;
      blockForm: boolean;
    }
    const segment = fc.constantFrom('a', 'b', 'ab', '+');
    const path = fc.tuple(fc.constantFrom('', '/'), fc.array(segment, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '*', '/*'))
      .map(([lead, segments, tail]) => lead + segments.join('/') + tail)
      .filter((p) => !p.includes('+*'));
    const parameterName = fc.constantFrom('bar', 'Bar', 'baz', '*', '__proto__');
    const parameterValue = fc.oneof(fc.constantFrom('zip', 'za*', '*ip', 'x'), fc.string({ maxLength: 4 }), fc.integer({ min: -2, max: 2 }), fc.boolean());
    const parameters = fc.array(fc.tuple(parameterName, fc.array(parameterValue, { maxLength: 3 })), { maxLength: 3 });
    const rule: fc.Arbitrary<RandomRule> = fc.record({
      path,
      capabilities: fc.subarray(['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'deny']),
      legacy: fc.option(fc.constantFrom('deny', 'read', 'write', 'sudo'), { nil: undefined }),
      allowed: parameters,
      denied: parameters,
      required: fc.subarray(['bar', 'baz', 'Qux']),
      maxWrappingTtl: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
      blockForm: fc.boolean(),
    });

    /** HCL, varying the syntax: block vs attribute objects, trailing commas, comments. */
    function toHcl(rules: readonly RandomRule[]): string {
      const str = (s: string): string => JSON.stringify(s);
      const value = (v: unknown): string => (typeof v === 'string' ? str(v) : String(v));
      const object = (name: string, entries: [string, unknown[]][], block: boolean): string =>
        `  ${name}${block ? '' : ' ='} {\n${entries.map(([k, vs]) => `    ${str(k)} = [${vs.map(value).join(', ')}${vs.length > 0 && block ? ',' : ''}]`).join('\n')}\n  }\n`;
      return rules.map((r) => {
        let body = `  capabilities = [${r.capabilities.map(str).join(', ')}]  # granted\n`;
        if (r.legacy !== undefined) body += `  policy = ${str(r.legacy)}\n`;
        if (r.allowed.length > 0) body += object('allowed_parameters', r.allowed, r.blockForm);
        if (r.denied.length > 0) body += object('denied_parameters', r.denied, !r.blockForm);
        if (r.required.length > 0) body += `  required_parameters = [${r.required.map(str).join(', ')}]\n`;
        if (r.maxWrappingTtl !== undefined) body += `  max_wrapping_ttl = ${r.blockForm ? r.maxWrappingTtl : str(`${r.maxWrappingTtl}s`)}\n`;
        return `// rule\npath ${str(r.path)} {\n${body}}\n`;
      }).join('\n');
    }

    /**
     * JSON, written by hand so repeated parameter names stay repeated (HCL keeps them too): an
     * object of paths when they are distinct, else the list-of-objects form HCL's JSON reader takes.
     */
    function toJson(rules: readonly RandomRule[]): string {
      const str = (v: unknown): string => JSON.stringify(v);
      const pairs = (entries: readonly [string, unknown[]][]): string => `{${entries.map(([k, vs]) => `${str(k)}: ${str(vs)}`).join(', ')}}`;
      const body = (r: RandomRule): string => {
        const fields = [`"capabilities": ${str(r.capabilities)}`];
        if (r.legacy !== undefined) fields.push(`"policy": ${str(r.legacy)}`);
        if (r.allowed.length > 0) fields.push(`"allowed_parameters": ${pairs(r.allowed)}`);
        if (r.denied.length > 0) fields.push(`"denied_parameters": ${pairs(r.denied)}`);
        if (r.required.length > 0) fields.push(`"required_parameters": ${str(r.required)}`);
        if (r.maxWrappingTtl !== undefined) fields.push(`"max_wrapping_ttl": ${r.maxWrappingTtl}`);
        return `{${fields.join(', ')}}`;
      };
      const distinct = new Set(rules.map((r) => r.path)).size === rules.length;
      if (distinct) return `{"path": {${rules.map((r) => `${str(r.path)}: ${body(r)}`).join(', ')}}}`;
      return `{"path": [${rules.map((r) => `{${str(r.path)}: ${body(r)}}`).join(', ')}]}`;
    }

    const request = fc.record({
      path: fc.array(fc.constantFrom('a', 'b', 'ab', 'abc', ''), { minLength: 1, maxLength: 4 }).map((s) => s.join('/')),
      operation: fc.constantFrom(...OPERATIONS),
      data: fc.option(fc.dictionary(fc.constantFrom('bar', 'BAR', 'baz', 'qux', 'x'), parameterValue, { maxKeys: 3 }), { nil: undefined }),
      wrapTtl: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
    });

    it('parse to the same rules and give the same decisions and capabilities', () => {
      fc.assert(
        fc.property(fc.array(rule, { maxLength: 5 }), fc.array(request, { minLength: 1, maxLength: 8 }), (rules, requests) => {
          const hcl = toHcl(rules);
          const json = toJson(rules);
          const fromHcl = parsePolicy('p', hcl);
          const fromJson = parsePolicy('p', json);
          expect(plainRules(fromJson.rules), `${hcl}\n${json}`).to.deep.equal(plainRules(fromHcl.rules));
          const cleaned = requests.map((r) => ({
            path: r.path, operation: r.operation, ...(r.data ? { data: r.data } : {}), ...(r.wrapTtl !== undefined ? { wrapTtl: r.wrapTtl } : {}),
          }));
          expect(decisions(new ACL([fromJson]), cleaned)).to.deep.equal(decisions(new ACL([fromHcl]), cleaned));
        }),
        { numRuns: 200 },
      );
    });
  });
});
