/**
 * The lexer of core/hcl.ts: HCL1 or JSON source text into tokens (identifiers, strings with their
 * escapes decoded, numbers, punctuation), each with its line and column, and the syntax error both
 * the lexer and the parser throw.
 */
import { BadRequestError, createError } from './errors.js';

/** 1-based line and column (in UTF-16 code units) of a token in the source text. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** HCL1, or its JSON form. */
export type HclSyntax = 'hcl' | 'json';

/** A syntax error at a known place. The message reads `line N, column M: expected X, got Y`. */
export class HclSyntaxError extends createError('HclSyntaxError', 'KW_HCL_SYNTAX', 400, { parent: BadRequestError }) {
  constructor(readonly line: number, readonly column: number, readonly detail: string) {
    super(`line ${line}, column ${column}: ${detail}`);
  }
}

export type TokenType = 'ident' | 'string' | 'number' | 'punct' | 'eof';

export interface Token {
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

export class Lexer {
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
