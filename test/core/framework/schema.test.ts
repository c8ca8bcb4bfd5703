import { expect } from 'chai';
import { BadRequestError } from '../../../core/errors.js';
import { compileFields } from '../../../core/framework/schema.js';
import type { FieldSpecs } from '../../../core/framework/fields.js';

/** The error message parse throws, or a failure when it does not throw. */
function refusal(fields: FieldSpecs, raw: Record<string, unknown>): string {
  try {
    compileFields(fields).parse(raw);
  } catch (err) {
    expect(err).to.be.instanceOf(BadRequestError);
    return (err as Error).message;
  }
  expect.fail(`expected ${JSON.stringify(raw)} to be refused`);
}

describe('framework field schema', () => {
  const fields = {
    name: { type: 'name', description: 'The key name.', required: true },
    count: { type: 'int', description: 'How many.', default: 3 },
    exportable: { type: 'bool', description: 'Whether the key may leave.', default: false },
    ttl: { type: 'duration', description: 'Lifetime.' },
    tags: { type: 'comma-string-list', description: 'Labels.', default: ['base'] },
  } as const satisfies FieldSpecs;

  it('coerces every given field to its type', () => {
    const { input } = compileFields(fields).parse({ name: 'k1', count: '12', exportable: 'True', ttl: '1h30m', tags: 'a,b' });
    expect(input).to.deep.equal({ name: 'k1', count: 12, exportable: true, ttl: 5400, tags: ['a', 'b'] });
  });

  it('applies defaults to fields that are absent and leaves the others unset', () => {
    const { input } = compileFields(fields).parse({ name: 'k1' });
    expect(input).to.deep.equal({ name: 'k1', count: 3, exportable: false, tags: ['base'] });
    expect(input).not.to.have.property('ttl');
  });

  it('treats null and "" as unset: the default applies, or the field stays absent', () => {
    for (const unset of [null, '']) {
      const { input } = compileFields(fields).parse({ name: 'k1', count: unset, exportable: unset, ttl: unset, tags: unset });
      expect(input, JSON.stringify(unset)).to.deep.equal({ name: 'k1', count: 3, exportable: false, tags: ['base'] });
    }
  });

  it('keeps a given falsy value rather than the default', () => {
    const { input } = compileFields(fields).parse({ name: 'k1', count: 0, exportable: 'false', tags: [] });
    expect(input).to.include({ count: 0, exportable: false });
    expect(input.tags).to.deep.equal([]);
  });

  it('hands every parse its own copy of a default list', () => {
    const compiled = compileFields(fields);
    const first = compiled.parse({ name: 'a' }).input.tags as string[];
    first.push('changed by a handler');
    expect(compiled.parse({ name: 'b' }).input.tags).to.deep.equal(['base']);
  });

  it('refuses a missing required field, naming it', () => {
    expect(refusal(fields, { count: 1 })).to.equal('missing required field "name"');
  });

  it('refuses a required field sent as null or "", naming it', () => {
    expect(refusal(fields, { name: null })).to.equal('missing required field "name"');
    expect(refusal(fields, { name: '' })).to.equal('missing required field "name"');
  });

  it('refuses a value of the wrong type, naming the field and the problem', () => {
    expect(refusal(fields, { name: 'k', count: 'many' })).to.equal('invalid value for field "count": expected an integer, got "many"');
    expect(refusal(fields, { name: 'k', exportable: 'yes' })).to.equal('invalid value for field "exportable": expected a boolean, got "yes"');
    expect(refusal(fields, { name: 'k', ttl: '5 minutes' })).to.match(/^invalid value for field "ttl": expected a duration/);
    expect(refusal(fields, { name: 'bad name' })).to.match(/^invalid value for field "name": must contain only/);
  });

  it('names a field whose name holds a slash or a tilde correctly', () => {
    const odd = { 'a/b': { type: 'int', description: 'slash' }, 'c~d': { type: 'int', description: 'tilde' } } as const;
    expect(refusal(odd, { 'a/b': 'x' })).to.match(/^invalid value for field "a\/b"/);
    expect(refusal(odd, { 'c~d': 'x' })).to.match(/^invalid value for field "c~d"/);
  });

  it('lists the parameters it does not know, sorted, and leaves them out of the input', () => {
    const { input, unknown } = compileFields(fields).parse({ name: 'k', zeta: 1, alpha: null, count: 1 });
    expect(unknown).to.deep.equal(['alpha', 'zeta']);
    expect(input).not.to.have.any.keys('zeta', 'alpha');
  });

  it('reports no unknown parameters when every parameter is known', () => {
    expect(compileFields(fields).parse({ name: 'k', ttl: 5 }).unknown).to.deep.equal([]);
  });

  describe('constraints', () => {
    const constrained = {
      mode: { type: 'string', description: 'Mode.', allowedValues: ['fast', 'safe'] },
      level: { type: 'lowercase-string', description: 'Level.', allowedValues: ['low', 'high'] },
      size: { type: 'int', description: 'Size.', minimum: 10, maximum: 20 },
      period: { type: 'duration', description: 'Period.', minimum: 60 },
    } as const satisfies FieldSpecs;

    it('accepts allowed values and values within bounds, bounds included', () => {
      const { input } = compileFields(constrained).parse({ mode: 'safe', level: 'HIGH', size: '20', period: '1m' });
      expect(input).to.deep.equal({ mode: 'safe', level: 'high', size: 20, period: 60 });
      expect(compileFields(constrained).parse({ size: 10 }).input.size).to.equal(10);
    });

    it('refuses a value outside the allowed ones, naming the field and the choices', () => {
      expect(refusal(constrained, { mode: 'reckless' })).to.equal('invalid value for field "mode": must be one of "fast", "safe"');
    });

    it('refuses numbers below the minimum or above the maximum', () => {
      expect(refusal(constrained, { size: 9 })).to.equal('invalid value for field "size": must be at least 10');
      expect(refusal(constrained, { size: '21' })).to.equal('invalid value for field "size": must be at most 20');
    });

    it('checks duration bounds in seconds after reading units', () => {
      expect(refusal(constrained, { period: '30s' })).to.equal('invalid value for field "period": must be at least 60');
    });
  });

  it('never echoes the value of a sensitive field in an error', () => {
    const secret = { pin: { type: 'int', description: 'A PIN.', sensitive: true } } as const satisfies FieldSpecs;
    const message = refusal(secret, { pin: 'hunter2' });
    expect(message).to.match(/^invalid value for field "pin"/);
    expect(message).not.to.include('hunter2');
  });
});
