/**
 * A parser for the part of HCL that Vault policies and server configuration files use, plus the
 * JSON form of the same documents, both into one intermediate tree.
 *
 * Hand-written on purpose: Vault parses policies with HCL version 1, and no maintained npm library
 * parses HCL1 faithfully (the HCL2 ports reject `path "x" { ... }` repeated blocks merged into one
 * key, and the HCL1 ports are unmaintained). The subset is small: comments (`#`, `//`, `/* *\/`),
 * attributes `key = value`, blocks `key "label" { ... }`, strings with escapes, numbers, booleans,
 * lists with optional trailing commas and nested objects. Heredocs and `${}` interpolation are not
 * part of the subset.
 *
 * Both syntaxes keep every item in document order, duplicates included: HCL1 turns two
 * `path "a" {}` blocks into two items, and so does its JSON reader for a repeated key, so the
 * consumer (the policy parser, the config loader) decides what a duplicate means. The lexer is
 * hcl-lexer.ts; this module is the parser and the tree it builds.
 */
import { HclSyntaxError, Lexer, type HclSyntax, type SourcePosition, type Token } from './hcl-lexer.js';

export { HclSyntaxError, type HclSyntax, type SourcePosition } from './hcl-lexer.js';

export type HclValue = HclString | HclNumber | HclBool | HclNull | HclList | HclObject;

export interface HclString { readonly kind: 'string'; readonly value: string; readonly pos: SourcePosition }
export interface HclNumber { readonly kind: 'number'; readonly value: number; readonly pos: SourcePosition }
export interface HclBool { readonly kind: 'bool'; readonly value: boolean; readonly pos: SourcePosition }
/** Only JSON has `null`; HCL1 has no null literal. */
export interface HclNull { readonly kind: 'null'; readonly pos: SourcePosition }
export interface HclList { readonly kind: 'list'; readonly items: readonly HclValue[]; readonly pos: SourcePosition }
export interface HclObject { readonly kind: 'object'; readonly items: readonly HclItem[]; readonly pos: SourcePosition }

/**
 * One `key = value` or block. A block with labels, `path "a" { body }`, is stored as if it had been
 * written `path = { "a" = { body } }`, which is also exactly the shape of its JSON form
 * `{"path": {"a": { body }}}`.
 */
export interface HclItem {
  readonly key: string;
  readonly keyPos: SourcePosition;
  readonly value: HclValue;
}

/**
 * Parses an HCL or JSON document into its top-level object. Unless `syntax` says which, a document
 * whose first non-blank character is `{` is JSON (as in Vault, where HCL1 hands such text to its
 * JSON reader); a `.json` config file is JSON whatever it starts with.
 * @throws HclSyntaxError with the line, column and what was expected.
 */
export function parseHclDocument(text: string, syntax: HclSyntax = /^\s*\{/.test(text) ? 'json' : 'hcl'): HclObject {
  const parser = new Parser(new Lexer(text, syntax));
  return syntax === 'json' ? parser.jsonDocument() : parser.hclDocument();
}

/** How a value is named in error messages: "a string", "a list", ... */
export function describeHclValue(value: HclValue): string {
  switch (value.kind) {
    case 'string': return 'a string';
    case 'number': return 'a number';
    case 'bool': return 'a boolean';
    case 'null': return 'null';
    case 'list': return 'a list';
    case 'object': return 'an object';
  }
}

/**
 * Documents nest a few levels. The parser recurses once per level, so a limit keeps a hostile
 * document from overflowing the stack, which would answer 500 instead of a syntax error.
 */
const MAX_NESTING = 100;

class Parser {
  private depth = 0;

  constructor(private readonly lexer: Lexer) {}

  private nested<T>(open: Token, parse: () => T): T {
    if (this.depth >= MAX_NESTING) throw new HclSyntaxError(open.line, open.column, `nested deeper than ${MAX_NESTING} levels`);
    this.depth++;
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  hclDocument(): HclObject {
    const start = this.lexer.peek();
    const items = this.hclBody('eof');
    return { kind: 'object', items, pos: positionOf(start) };
  }

  jsonDocument(): HclObject {
    const value = this.jsonValue();
    this.expectEnd();
    if (value.kind !== 'object') throw new HclSyntaxError(value.pos.line, value.pos.column, `expected an object, got ${describeHclValue(value)}`);
    return value;
  }

  /** Items up to a closing brace (inside an object) or the end of input (the document body). */
  private hclBody(end: '}' | 'eof'): HclItem[] {
    const items: HclItem[] = [];
    for (;;) {
      const token = this.lexer.peek();
      if (end === 'eof' ? token.type === 'eof' : isPunct(token, '}')) return items;
      if (end === '}' && token.type === 'eof') throw this.unexpected(token, "expected a key or '}' to close the object");
      items.push(this.hclItem());
      // HCL1 allows a comma between the items of an object.
      if (isPunct(this.lexer.peek(), ',')) this.lexer.next();
    }
  }

  private hclItem(): HclItem {
    const keys: Token[] = [];
    const first = this.lexer.next();
    if (first.type !== 'ident' && first.type !== 'string') {
      throw this.unexpected(first, 'expected a key (an identifier or a quoted string)');
    }
    keys.push(first);
    let value: HclValue;
    for (;;) {
      const token = this.lexer.peek();
      if (isPunct(token, '=')) {
        if (keys.length > 1) throw this.unexpected(token, `expected '{' after ${describeKeys(keys)}`);
        this.lexer.next();
        value = this.hclValue();
        break;
      }
      if (isPunct(token, '{')) {
        value = this.hclObject();
        break;
      }
      if (token.type === 'ident' || token.type === 'string') {
        keys.push(this.lexer.next());
        continue;
      }
      const expected = keys.length > 1 ? "'{'" : "'=' or '{'";
      throw this.unexpected(token, `expected ${expected} after ${describeKeys(keys)}`);
    }
    for (let i = keys.length - 1; i > 0; i--) {
      const label = keys[i]!;
      value = { kind: 'object', items: [{ key: label.value, keyPos: positionOf(label), value }], pos: positionOf(label) };
    }
    return { key: first.value, keyPos: positionOf(first), value };
  }

  private hclValue(): HclValue {
    const token = this.lexer.peek();
    if (isPunct(token, '{')) return this.hclObject();
    if (isPunct(token, '[')) return this.nested(token, () => this.list(() => this.hclValue(), true));
    this.lexer.next();
    return this.literal(token, ['true', 'false']) ?? this.fail(token, 'expected a value (a string, number, boolean, list or object)');
  }

  private hclObject(): HclObject {
    const open = this.lexer.next();
    const items = this.nested(open, () => this.hclBody('}'));
    this.lexer.next();
    return { kind: 'object', items, pos: positionOf(open) };
  }

  private jsonValue(): HclValue {
    const token = this.lexer.next();
    if (isPunct(token, '{')) return this.nested(token, () => this.jsonObject(token));
    if (isPunct(token, '[')) return this.nested(token, () => this.list(() => this.jsonValue(), false, token));
    return this.literal(token, ['true', 'false', 'null']) ?? this.fail(token, 'expected a JSON value');
  }

  private jsonObject(open: Token): HclObject {
    const items: HclItem[] = [];
    if (isPunct(this.lexer.peek(), '}')) {
      this.lexer.next();
      return { kind: 'object', items, pos: positionOf(open) };
    }
    for (;;) {
      const key = this.lexer.next();
      if (key.type !== 'string') throw this.unexpected(key, 'expected a quoted key in the object');
      const colon = this.lexer.next();
      if (!isPunct(colon, ':')) throw this.unexpected(colon, `expected ':' after key ${JSON.stringify(key.value)}`);
      items.push({ key: key.value, keyPos: positionOf(key), value: this.jsonValue() });
      const separator = this.lexer.next();
      if (isPunct(separator, '}')) return { kind: 'object', items, pos: positionOf(open) };
      if (!isPunct(separator, ',')) throw this.unexpected(separator, "expected ',' or '}' in the object");
    }
  }

  /** A list; `[` is already consumed when `open` is given. HCL allows a trailing comma, JSON does not. */
  private list(element: () => HclValue, trailingComma: boolean, open: Token = this.lexer.next()): HclList {
    const items: HclValue[] = [];
    if (isPunct(this.lexer.peek(), ']')) {
      this.lexer.next();
      return { kind: 'list', items, pos: positionOf(open) };
    }
    for (;;) {
      items.push(element());
      const separator = this.lexer.next();
      if (isPunct(separator, ']')) return { kind: 'list', items, pos: positionOf(open) };
      if (!isPunct(separator, ',')) throw this.unexpected(separator, "expected ',' or ']' in the list");
      if (trailingComma && isPunct(this.lexer.peek(), ']')) {
        this.lexer.next();
        return { kind: 'list', items, pos: positionOf(open) };
      }
    }
  }

  private literal(token: Token, words: readonly string[]): HclValue | undefined {
    const pos = positionOf(token);
    if (token.type === 'string') return { kind: 'string', value: token.value, pos };
    if (token.type === 'number') return { kind: 'number', value: Number(token.text), pos };
    if (token.type === 'ident' && words.includes(token.text)) {
      if (token.text === 'null') return { kind: 'null', pos };
      return { kind: 'bool', value: token.text === 'true', pos };
    }
    return undefined;
  }

  private expectEnd(): void {
    const token = this.lexer.next();
    if (token.type !== 'eof') throw this.unexpected(token, 'expected end of input');
  }

  private fail(token: Token, expected: string): never {
    throw this.unexpected(token, expected);
  }

  private unexpected(token: Token, expected: string): HclSyntaxError {
    return new HclSyntaxError(token.line, token.column, `${expected}, got ${describeToken(token)}`);
  }
}

function positionOf(token: Token): SourcePosition {
  return { line: token.line, column: token.column };
}

function isPunct(token: Token, text: string): boolean {
  return token.type === 'punct' && token.text === text;
}

function describeKeys(keys: readonly Token[]): string {
  return keys.length === 1 ? `key ${JSON.stringify(keys[0]!.value)}` : `block ${keys.map((k) => JSON.stringify(k.value)).join(' ')}`;
}

function describeToken(token: Token): string {
  switch (token.type) {
    case 'eof': return 'end of input';
    case 'punct': return `'${token.text}'`;
    case 'string': return `string ${JSON.stringify(token.value)}`;
    case 'number': return `number ${token.text}`;
    case 'ident': return `identifier ${token.text}`;
  }
}
