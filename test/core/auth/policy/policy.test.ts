import { expect } from 'chai';
import { BadRequestError } from '../../../../core/errors.js';
import { parsePolicy, type PathRule } from '../../../../core/auth/policy/policy.js';

/** A rule as plain data, capabilities sorted, for deep comparison. */
function plain(rule: PathRule): Record<string, unknown> {
  return {
    ...rule,
    capabilities: [...rule.capabilities].sort(),
    allowedParameters: { ...rule.allowedParameters },
    deniedParameters: { ...rule.deniedParameters },
  };
}

function onlyRule(text: string): Record<string, unknown> {
  const policy = parsePolicy('p', text);
  expect(policy.rules).to.have.length(1);
  return plain(policy.rules[0]!);
}

function parseError(text: string): string {
  try {
    parsePolicy('p', text);
  } catch (err) {
    expect(err).to.be.instanceOf(BadRequestError);
    return (err as Error).message;
  }
  expect.fail(`expected ${JSON.stringify(text)} to be refused`);
}

describe('policy documents', () => {
  it('keeps the name and the raw text; the document\'s own "name" is ignored', () => {
    const text = 'name = "other"\npath "a" { capabilities = ["read"] }';
    const policy = parsePolicy('mine', text);
    expect(policy.name).to.equal('mine');
    expect(policy.raw).to.equal(text);
  });

  it('parses a path rule with every field', () => {
    expect(onlyRule(`
      path "/secret/foo" {
        capabilities = ["create", "update", "sudo"]
        allowed_parameters = { "Bar" = ["zip", 1, true] }
        denied_parameters { "baz" = [] }
        required_parameters = ["bar"]
        min_wrapping_ttl = "1s"
        max_wrapping_ttl = 90
        comment = "documentation only"
      }`)).to.deep.equal({
      path: 'secret/foo',
      capabilities: ['create', 'sudo', 'update'],
      allowedParameters: { bar: ['zip', 1, true] },
      deniedParameters: { baz: [] },
      requiredParameters: ['bar'],
      minWrappingTtl: 1,
      maxWrappingTtl: 90,
    });
  });

  it('accepts an empty document and an empty path block', () => {
    expect(parsePolicy('p', '').rules).to.deep.equal([]);
    expect(onlyRule('path "a" {}')).to.deep.include({ path: 'a', capabilities: [] });
  });

  it('strips a single leading slash from the path', () => {
    expect(onlyRule('path "/a/b" { capabilities = ["read"] }').path).to.equal('a/b');
  });

  describe('the legacy policy word', () => {
    const table: [string, string[]][] = [
      ['deny', ['deny']],
      ['read', ['list', 'read']],
      ['write', ['create', 'delete', 'list', 'read', 'update']],
      ['sudo', ['create', 'delete', 'list', 'read', 'sudo', 'update']],
    ];
    for (const [word, capabilities] of table) {
      it(`maps "${word}" to ${capabilities.join(', ')}`, () => {
        expect(onlyRule(`path "a" { policy = "${word}" }`).capabilities).to.deep.equal(capabilities);
      });
    }

    it('adds to the capabilities list', () => {
      expect(onlyRule('path "a" { policy = "read"\n capabilities = ["patch"] }').capabilities).to.deep.equal(['list', 'patch', 'read']);
    });

    it('works in node-vault\'s JSON form', () => {
      expect(onlyRule('{"path":{"secret/*":{"policy":"write"}}}')).to.deep.include({
        path: 'secret/*', capabilities: ['create', 'delete', 'list', 'read', 'update'],
      });
    });

    it('refuses other words', () => {
      expect(parseError('path "a" { policy = "admin" }')).to.equal(
        'failed to parse policy: line 1, column 21: path "a": invalid policy "admin" (expected deny, read, write or sudo)',
      );
    });
  });

  it('keeps deny alone, dropping other capabilities and parameters', () => {
    expect(onlyRule('path "a" { capabilities = ["read", "deny", "sudo"]\n allowed_parameters = { x = [] } }')).to.deep.equal({
      path: 'a', capabilities: ['deny'], allowedParameters: {}, deniedParameters: {}, requiredParameters: [],
    });
  });

  it('lower-cases parameter names and merges names that differ only in case', () => {
    expect(onlyRule('path "a" { allowed_parameters = { "X" = ["1"], "x" = ["2"] } }').allowedParameters).to.deep.equal({ x: ['2', '1'] });
  });

  it('keeps a parameter named __proto__ as an ordinary key', () => {
    const rule = parsePolicy('p', 'path "a" { denied_parameters = { "__proto__" = [] } }').rules[0]!;
    expect(Object.keys(rule.deniedParameters)).to.deep.equal(['__proto__']);
    expect(Object.getPrototypeOf({})).to.equal(Object.prototype);
  });

  describe('the same path twice in one policy', () => {
    it('merges capabilities and parameters', () => {
      expect(onlyRule(`
        path "a" { capabilities = ["read"]
                   allowed_parameters = { x = ["1"] }
                   required_parameters = ["x"]
                   max_wrapping_ttl = "2m" }
        path "/a" { capabilities = ["update"]
                    allowed_parameters = { x = ["2"], y = [] }
                    required_parameters = ["y", "x"]
                    max_wrapping_ttl = "1m" }`)).to.deep.equal({
        path: 'a',
        capabilities: ['read', 'update'],
        allowedParameters: { x: ['2', '1'], y: [] },
        deniedParameters: {},
        requiredParameters: ['x', 'y'],
        maxWrappingTtl: 60,
      });
    });

    it('lets a deny win', () => {
      expect(onlyRule('path "a" { capabilities = ["read"] }\npath "a" { capabilities = ["deny"] }').capabilities).to.deep.equal(['deny']);
    });
  });

  describe('refuses', () => {
    const table: { name: string; text: string; message: string }[] = [
      {
        name: 'an unknown capability, naming it',
        text: 'path "secret/*" {\n  capabilities = ["read", "reed"]\n}',
        message: 'line 2, column 27: path "secret/*": invalid capability "reed"',
      },
      { name: 'a capability in the wrong case', text: 'path "a" { capabilities = ["READ"] }', message: 'line 1, column 28: path "a": invalid capability "READ"' },
      { name: 'OpenBao\'s scan capability', text: 'path "a" { capabilities = ["scan"] }', message: 'line 1, column 28: path "a": invalid capability "scan"' },
      {
        name: 'an unknown path key, naming it',
        text: 'path "a" {\n  capabilities = ["read"]\n  allowed_parameter = {}\n}',
        message: 'line 3, column 3: path "a": unknown key "allowed_parameter"',
      },
      {
        name: 'Vault Enterprise MFA on a path, which it would not enforce',
        text: 'path "a" {\n  capabilities = ["read"]\n  mfa_methods = ["totp"]\n}',
        message: 'line 3, column 3: path "a": "mfa_methods": MFA on a policy path is a Vault Enterprise feature Keywarden does not enforce; remove it (the path would be granted without MFA)',
      },
      {
        name: 'a Vault Enterprise control group, which it would not enforce',
        text: 'path "a" { control_group = { factor "ops" { identity { group_names = ["ops"] } } } }',
        message: 'line 1, column 12: path "a": "control_group": control groups are a Vault Enterprise feature Keywarden does not enforce; remove it (the path would be granted without approval)',
      },
      { name: 'OpenBao-only path keys', text: 'path "a" { pagination_limit = 5 }', message: 'line 1, column 12: path "a": unknown key "pagination_limit"' },
      { name: 'an unknown top-level key', text: 'paths "a" {}', message: 'line 1, column 1: unknown key "paths" (a policy holds only "name" and "path")' },
      { name: 'a key given twice in one path', text: 'path "a" { capabilities = []\ncapabilities = [] }', message: 'line 2, column 1: path "a": duplicate key "capabilities"' },
      { name: 'a second name', text: 'name = "a"\nname = "b"', message: 'line 2, column 1: duplicate key "name"' },
      { name: 'a name that is not a string', text: 'name = 1', message: 'line 1, column 8: expected a string for "name", got a number' },
      { name: 'capabilities that are not a list', text: 'path "a" { capabilities = "read" }', message: 'line 1, column 27: path "a": expected a list of strings for "capabilities", got a string' },
      { name: 'a capability that is not a string', text: 'path "a" { capabilities = [1] }', message: 'line 1, column 28: path "a": expected a string in "capabilities", got a number' },
      { name: 'a path that is not a block', text: 'path = "a"', message: 'line 1, column 8: expected an object of path rules for "path", got a string' },
      { name: 'a path body that is not an object', text: '{"path": {"a": ["read"]}}', message: 'line 1, column 16: path "a": expected an object, got a list' },
      { name: '"*" before the end of the path', text: 'path "secret/*/foo" {}', message: 'line 1, column 6: path "secret/*/foo": \'*\' is only allowed as the last character' },
      { name: '"+*"', text: 'path "secret/+*" {}', message: 'line 1, column 6: path "secret/+*": invalid use of wildcards (\'+*\' is forbidden)' },
      { name: 'parameter values that are not a list', text: 'path "a" { allowed_parameters = { x = "1" } }', message: 'line 1, column 39: path "a": expected a list of values for allowed_parameters "x", got a string' },
      { name: 'parameters that are not an object', text: 'path "a" { denied_parameters = ["x"] }', message: 'line 1, column 32: path "a": expected an object for "denied_parameters", got a list' },
      { name: 'required parameters that are not strings', text: 'path "a" { required_parameters = [true] }', message: 'line 1, column 35: path "a": expected a string in "required_parameters", got a boolean' },
      { name: 'a malformed wrapping TTL', text: 'path "a" { min_wrapping_ttl = "soon" }', message: 'line 1, column 31: path "a": invalid min_wrapping_ttl: expected a duration such as "30s", "15m" or "1h", got "soon"' },
      { name: 'a max wrapping TTL below the min', text: 'path "a" {\n min_wrapping_ttl = "2m"\n max_wrapping_ttl = "1m" }', message: 'line 1, column 6: path "a": max_wrapping_ttl cannot be less than min_wrapping_ttl' },
      { name: 'an unbalanced template', text: 'path "a/{{identity.entity.id" {}', message: 'line 1, column 6: path "a/{{identity.entity.id": unbalanced templating characters: "{{" without a matching "}}"' },
      { name: 'an unknown template', text: 'path "a/{{identity.entity.email}}" {}', message: 'line 1, column 6: path "a/{{identity.entity.email}}": unsupported template "{{identity.entity.email}}"' },
      { name: 'a syntax error, with the parse prefix', text: 'path "a" {\n  capabilities ["read"]\n}', message: 'line 2, column 16: expected \'=\' or \'{\' after key "capabilities", got \'[\'' },
    ];
    for (const row of table) {
      it(row.name, () => {
        expect(parseError(row.text)).to.equal(`failed to parse policy: ${row.message}`);
      });
    }
  });

  describe('templated paths', () => {
    it('are marked, and kept unrendered in the rules', () => {
      const policy = parsePolicy('p', 'path "secret/data/{{identity.entity.id}}/*" { capabilities = ["read"] }');
      expect(policy.templated).to.equal(true);
      expect(policy.rules[0]!.path).to.equal('secret/data/{{identity.entity.id}}/*');
      expect(parsePolicy('p', 'path "secret/*" {}').templated).to.equal(false);
    });

    it('accept every documented selector, with spaces inside the braces', () => {
      for (const selector of [
        'identity.entity.id', 'identity.entity.name', 'identity.entity.metadata.team',
        'identity.entity.aliases.auth_kubernetes_xxxx.id', 'identity.entity.aliases.auth_kubernetes_xxxx.name',
        'identity.entity.aliases.auth_kubernetes_xxxx.metadata.service_account_namespace',
        'identity.entity.aliases.auth_userpass_1.custom_metadata.org',
        'identity.groups.ids.fb036ebc-2f62-4124-9503-42aa7A869741.name', 'identity.groups.names.ops.id',
        ' identity.entity.id ',
      ]) {
        expect(() => parsePolicy('p', `path "x/{{${selector}}}/*" {}`), selector).not.to.throw();
      }
    });
  });
});
