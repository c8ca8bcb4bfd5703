import { expect } from 'chai';
import { BadRequestError } from '../../core/errors.js';
import { HclSyntaxError, parseHclDocument, type HclObject, type HclValue } from '../../core/hcl.js';

/** The parsed tree without positions, items as [key, value] pairs (duplicates kept). */
function shape(value: HclValue): unknown {
  switch (value.kind) {
    case 'object': return value.items.map((item) => [item.key, shape(item.value)]);
    case 'list': return value.items.map(shape);
    case 'null': return null;
    default: return value.value;
  }
}

const parse = (text: string): unknown => shape(parseHclDocument(text));

function syntaxError(text: string): HclSyntaxError {
  try {
    parseHclDocument(text);
  } catch (err) {
    expect(err).to.be.instanceOf(HclSyntaxError);
    return err as HclSyntaxError;
  }
  expect.fail(`expected a syntax error for ${JSON.stringify(text)}`);
}

describe('policy HCL parser', () => {
  describe('HCL', () => {
    it('reads a labelled block as key = { label = { body } }', () => {
      expect(parse('path "secret/*" {\n  capabilities = ["read"]\n}\n')).to.deep.equal([
        ['path', [['secret/*', [['capabilities', ['read']]]]]],
      ]);
    });

    it('keeps repeated blocks as separate items, in order', () => {
      expect(parse('path "a" {}\npath "b" {}\npath "a" {}')).to.deep.equal([
        ['path', [['a', []]]], ['path', [['b', []]]], ['path', [['a', []]]],
      ]);
    });

    it('reads the block form and the attribute form of a nested object the same way', () => {
      const block = parse('allowed_parameters {\n  "bar" = ["zip", "zap"]\n  foo = []\n}');
      const attribute = parse('allowed_parameters = {\n  "bar" = ["zip", "zap"]\n  foo = []\n}');
      expect(block).to.deep.equal(attribute);
      expect(block).to.deep.equal([['allowed_parameters', [['bar', ['zip', 'zap']], ['foo', []]]]]);
    });

    it('accepts commas between object items and a trailing comma in lists', () => {
      expect(parse('o = { a = 1, b = 2, }\nl = ["x", "y",]')).to.deep.equal([
        ['o', [['a', 1], ['b', 2]]], ['l', ['x', 'y']],
      ]);
    });

    it('reads strings, numbers, booleans, nested lists and objects', () => {
      expect(parse('s = "x"\nn = -1.5e2\ni = 42\nb = true\nf = false\nl = [1, [true], { k = "v" }]')).to.deep.equal([
        ['s', 'x'], ['n', -150], ['i', 42], ['b', true], ['f', false], ['l', [1, [true], [['k', 'v']]]],
      ]);
    });

    it('skips #, // and /* */ comments anywhere between tokens', () => {
      const text = [
        '# hash comment',
        '// slash comment',
        '/* block',
        '   comment */ path /* inline */ "a" { # trailing',
        '  capabilities = [ /* x */ "read", // after',
        '  ]',
        '}',
      ].join('\n');
      expect(parse(text)).to.deep.equal([['path', [['a', [['capabilities', ['read']]]]]]]);
    });

    it('decodes string escapes', () => {
      const table: [string, string][] = [
        ['"a\\"b"', 'a"b'],
        ['"a\\\\b"', 'a\\b'],
        ['"\\n\\t\\r"', '\n\t\r'],
        ['"\\u00e9"', 'é'],
        ['"\\U0001F600"', '\u{1F600}'],
        ['"\\x41"', 'A'],
        ['"\\101"', 'A'],
      ];
      for (const [literal, decoded] of table) expect(parse(`k = ${literal}`), literal).to.deep.equal([['k', decoded]]);
    });

    it('allows identifiers with dashes and dots as keys', () => {
      expect(parse('min-ttl.x = 1')).to.deep.equal([['min-ttl.x', 1]]);
    });

    it('parses an empty document to an empty object', () => {
      expect(parse('')).to.deep.equal([]);
      expect(parse('  # only a comment\n')).to.deep.equal([]);
    });
  });

  describe('JSON', () => {
    it('is chosen when the first non-blank character is "{"', () => {
      expect(parse('  \n {"path": {"secret/*": {"capabilities": ["read"]}}}')).to.deep.equal([
        ['path', [['secret/*', [['capabilities', ['read']]]]]],
      ]);
    });

    it('keeps duplicate keys as separate items', () => {
      expect(parse('{"a": 1, "a": 2}')).to.deep.equal([['a', 1], ['a', 2]]);
    });

    it('reads null, booleans, numbers and escapes', () => {
      expect(parse('{"n": null, "t": true, "x": -0.5, "s": "\\u0041\\/\\n"}')).to.deep.equal([
        ['n', null], ['t', true], ['x', -0.5], ['s', 'A/\n'],
      ]);
    });
  });

  describe('errors name the line, the column, what was expected and what was found', () => {
    const table: { name: string; text: string; line: number; column: number; message: string }[] = [
      {
        name: 'a missing "=" after a key',
        text: 'path "a" {\n  # grant\n  capabilities ["read"]\n}',
        line: 3, column: 16,
        message: 'expected \'=\' or \'{\' after key "capabilities", got \'[\'',
      },
      { name: 'an unclosed list', text: 'k = ["a" }', line: 1, column: 10, message: "expected ',' or ']' in the list, got '}'" },
      { name: 'an unclosed block', text: 'path "a" {\n  capabilities = []\n', line: 3, column: 1, message: "expected a key or '}' to close the object, got end of input" },
      { name: 'a bare word as a value', text: 'k = read', line: 1, column: 5, message: 'expected a value (a string, number, boolean, list or object), got identifier read' },
      { name: 'a key that is not a word or string', text: '= 1', line: 1, column: 1, message: "expected a key (an identifier or a quoted string), got '='" },
      { name: 'an "=" after a block label', text: 'path "a" = {}', line: 1, column: 10, message: 'expected \'{\' after block "path" "a", got \'=\'' },
      { name: 'an unterminated string', text: 'k = "abc', line: 1, column: 5, message: 'expected \'"\' to close the string, got end of input' },
      { name: 'a line break inside a string', text: 'k = "ab\nc"', line: 1, column: 8, message: 'expected \'"\' to close the string, got a line break' },
      { name: 'an unknown escape', text: 'k = "a\\qb"', line: 1, column: 7, message: 'expected an escape sequence after "\\", got \'q\'' },
      { name: 'an unclosed block comment', text: 'k = 1 /* never closed', line: 1, column: 7, message: 'expected "*/" to close the comment, got end of input' },
      { name: 'a heredoc', text: 'k = <<EOF\nx\nEOF', line: 1, column: 5, message: 'heredoc strings are not supported; use a quoted string' },
      { name: 'a stray character', text: 'k = 1\n@', line: 2, column: 1, message: "unexpected character '@'" },
      { name: 'a malformed number', text: 'k = 12abc', line: 1, column: 5, message: 'expected a number, got "12abc"' },
      { name: 'a JSON trailing comma', text: '{"a": [1,]}', line: 1, column: 10, message: "expected a JSON value, got ']'" },
      { name: 'a JSON object trailing comma', text: '{"a": 1,}', line: 1, column: 9, message: "expected a quoted key in the object, got '}'" },
      { name: 'a JSON missing colon', text: '{"a" 1}', line: 1, column: 6, message: 'expected \':\' after key "a", got number 1' },
      { name: 'a JSON comment', text: '{\n  # no\n}', line: 2, column: 3, message: "unexpected character '#'" },
      { name: 'JSON text after the document', text: '{} {}', line: 1, column: 4, message: "expected end of input, got '{'" },
      { name: 'a JSON leading-zero number', text: '{"a": 01}', line: 1, column: 7, message: 'expected a number, got "01"' },
    ];
    for (const row of table) {
      it(`for ${row.name}`, () => {
        const err = syntaxError(row.text);
        expect(err).to.be.instanceOf(BadRequestError);
        expect([err.line, err.column]).to.deep.equal([row.line, row.column]);
        expect(err.message).to.equal(`line ${row.line}, column ${row.column}: ${row.message}`);
      });
    }
  });

  it('returns positions of keys for later validation messages', () => {
    const doc: HclObject = parseHclDocument('\n  path "a" {\n    capabilities = []\n  }');
    const path = doc.items[0]!;
    expect(path.keyPos).to.deep.equal({ line: 2, column: 3 });
    const body = path.value.kind === 'object' ? path.value.items[0]! : undefined;
    expect(body?.keyPos).to.deep.equal({ line: 2, column: 8 });
  });
});
