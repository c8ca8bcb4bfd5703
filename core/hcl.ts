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
 * consumer (the policy parser, the config loader) decides what a duplicate means.
 */
import { BadRequestError, createError } from './errors.js';

/** 1-based line and column (in UTF-16 code units) of a token in the source text. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** HCL1, or its JSON form. */
export type HclSyntax = 'hcl' | 'json';

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

/** A syntax error at a known place. The message reads `line N, column M: expected X, got Y`. */
export class HclSyntaxError extends createError('HclSyntaxError', 'KW_HCL_SYNTAX', 400, { parent: BadRequestError }) {
  constructor(readonly line: number, readonly column: number, readonly detail: string) {
    super(`line ${line}, column ${column}: ${detail}`);
  }
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

type TokenType = 'ident' | 'string' | 'number' | 'punct' | 'eof';

interface Token {
  readonly type: TokenType;
  /** The source text of the token (for punctuation, the character itself). */
  readonly text: string;
  /** The decoded string value, for string tokens. */
  readonly value: string;
  readonly line: number;
  readonly column: number;
}

const HCL_PUNCTUATION = new Set(['{', '}', '[', ']', '=', ',']);
const JSON_PUNCTUATION = new Set(['{', '}', '[', ']', ':', ',']);

/** Escapes HCL1 strings accept (Go's strconv.Unquote set). */
const HCL_SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'",
};
const JSON_SIMPLE_ESCAPES: Record<string, string> = {
  b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"', '/': '/',
};

class Lexer {
  private offset = 0;
  private line = 1;
  private column = 1;
  private peeked: Token | undefined;

  constructor(private readonly text: string, readonly syntax: HclSyntax) {}

  peek(): Token {
    this.peeked ??= this.scan();
    return this.peeked;
  }

  next(): Token {
    const token = this.peek();
    this.peeked = undefined;
    return token;
  }

  private scan(): Token {
    this.skipBlankAndComments();
    const line = this.line;
    const column = this.column;
    if (this.offset >= this.text.length) return { type: 'eof', text: '', value: '', line, column };
    const ch = this.text[this.offset]!;
    const punctuation = this.syntax === 'hcl' ? HCL_PUNCTUATION : JSON_PUNCTUATION;
    if (punctuation.has(ch)) {
      this.advance(1);
      return { type: 'punct', text: ch, value: ch, line, column };
    }
    if (ch === '"') return this.scanString(line, column);
    if (ch === '-' || isDigit(ch)) return this.scanNumber(line, column);
    if (isIdentStart(ch)) {
      let end = this.offset + 1;
      while (end < this.text.length && isIdentPart(this.text[end]!, this.syntax)) end++;
      const text = this.text.slice(this.offset, end);
      this.advance(end - this.offset);
      return { type: 'ident', text, value: text, line, column };
    }
    if (this.syntax === 'hcl' && this.text.startsWith('<<', this.offset)) {
      throw new HclSyntaxError(line, column, 'heredoc strings are not supported; use a quoted string');
    }
    throw new HclSyntaxError(line, column, `unexpected character ${quoteChar(ch)}`);
  }

  private skipBlankAndComments(): void {
    for (;;) {
      const ch = this.text[this.offset];
      if (ch === undefined) return;
      if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n' || ch === '\uFEFF') {
        this.advance(1);
        continue;
      }
      if (this.syntax === 'json') return;
      if (ch === '#' || this.text.startsWith('//', this.offset)) {
        while (this.offset < this.text.length && this.text[this.offset] !== '\n') this.advance(1);
        continue;
      }
      if (this.text.startsWith('/*', this.offset)) {
        const line = this.line;
        const column = this.column;
        const end = this.text.indexOf('*/', this.offset + 2);
        if (end < 0) throw new HclSyntaxError(line, column, 'expected "*/" to close the comment, got end of input');
        this.advance(end + 2 - this.offset);
        continue;
      }
      return;
    }
  }

  private scanString(line: number, column: number): Token {
    const start = this.offset;
    this.advance(1);
    let value = '';
    for (;;) {
      const ch = this.text[this.offset];
      if (ch === undefined) throw new HclSyntaxError(line, column, 'expected \'"\' to close the string, got end of input');
      if (ch === '\n') throw new HclSyntaxError(this.line, this.column, 'expected \'"\' to close the string, got a line break');
      if (ch === '"') {
        this.advance(1);
        return { type: 'string', text: this.text.slice(start, this.offset), value, line, column };
      }
      if (ch === '\\') {
        value += this.scanEscape();
        continue;
      }
      if (this.syntax === 'json' && ch < ' ') {
        throw new HclSyntaxError(this.line, this.column, 'expected an escaped control character in the string, got a raw one');
      }
      value += ch;
      this.advance(1);
    }
  }

  private scanEscape(): string {
    const line = this.line;
    const column = this.column;
    const kind = this.text[this.offset + 1];
    const simple = this.syntax === 'hcl' ? HCL_SIMPLE_ESCAPES : JSON_SIMPLE_ESCAPES;
    if (kind !== undefined && Object.hasOwn(simple, kind)) {
      this.advance(2);
      return simple[kind]!;
    }
    const hexDigits = kind === 'u' ? 4 : this.syntax === 'hcl' && kind === 'U' ? 8 : this.syntax === 'hcl' && kind === 'x' ? 2 : 0;
    if (hexDigits > 0) {
      const hex = this.text.slice(this.offset + 2, this.offset + 2 + hexDigits);
      if (hex.length !== hexDigits || !/^[0-9a-fA-F]+$/.test(hex)) {
        throw new HclSyntaxError(line, column, `expected ${hexDigits} hex digits after "\\${kind}", got ${JSON.stringify(hex)}`);
      }
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) throw new HclSyntaxError(line, column, `escape "\\${kind}${hex}" is not a valid Unicode code point`);
      this.advance(2 + hexDigits);
      return String.fromCodePoint(code);
    }
    if (this.syntax === 'hcl' && kind !== undefined && /[0-7]/.test(kind)) {
      const octal = this.text.slice(this.offset + 1, this.offset + 4);
      if (!/^[0-7]{3}$/.test(octal) || parseInt(octal, 8) > 255) {
        throw new HclSyntaxError(line, column, `expected 3 octal digits after "\\", got ${JSON.stringify(octal)}`);
      }
      this.advance(4);
      return String.fromCharCode(parseInt(octal, 8));
    }
    throw new HclSyntaxError(line, column, `expected an escape sequence after "\\", got ${kind === undefined ? 'end of input' : quoteChar(kind)}`);
  }

  private scanNumber(line: number, column: number): Token {
    const pattern = this.syntax === 'json'
      ? /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
      : /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    pattern.lastIndex = this.offset;
    const match = pattern.exec(this.text);
    const after = match ? this.text[this.offset + match[0].length] : undefined;
    if (!match || (after !== undefined && isIdentPart(after, 'hcl'))) {
      const word = /[^\s{}[\],=:]*/y;
      word.lastIndex = this.offset;
      throw new HclSyntaxError(line, column, `expected a number, got ${JSON.stringify(word.exec(this.text)![0])}`);
    }
    this.advance(match[0].length);
    return { type: 'number', text: match[0], value: match[0], line, column };
  }

  private advance(count: number): void {
    for (let i = 0; i < count; i++) {
      if (this.text[this.offset] === '\n') {
        this.line++;
        this.column = 1;
      } else {
        this.column++;
      }
      this.offset++;
    }
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

function quoteChar(ch: string): string {
  const code = ch.codePointAt(0)!;
  return code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${ch}'`;
}

function isDigit(ch: string): boolean {
  return ch >= '0' && ch <= '9';
}

function isIdentStart(ch: string): boolean {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch === '_';
}

/** HCL1 identifiers may contain `-` and `.` after the first character; JSON words are letters only. */
function isIdentPart(ch: string, syntax: HclSyntax): boolean {
  if (isIdentStart(ch) || isDigit(ch)) return true;
  return syntax === 'hcl' && (ch === '-' || ch === '.');
}
