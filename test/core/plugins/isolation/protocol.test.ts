/**
 * Errors across the isolation boundary: rebuilt from the same catalogue as in-process, so each
 * keeps its class, status and public message.
 */
import { expect } from 'chai';
import {
  BadRequestError,
  ConflictError,
  IntegrityError,
  InternalError,
  NotActiveError,
  UnavailableError,
  catalogue,
  createError,
  httpStatusOf,
  publicMessageOf,
} from '../../../../core/errors.js';
import { fromWire, toWire } from '../../../../core/plugins/isolation/protocol.js';

/** Through the wire format and back, as a structured clone would carry it. */
const across = (err: unknown): Error => fromWire(structuredClone(toWire(err)), 'plugin "p" failed: ');

describe('the isolation wire format for errors', () => {
  it('rebuilds every class of the catalogue with its status and public message', () => {
    for (const [code, cls] of catalogue()) {
      const original = new cls(`detail of ${code}`);
      const rebuilt = across(original);
      expect(rebuilt, code).to.be.instanceOf(cls);
      expect(httpStatusOf(rebuilt), code).to.equal(httpStatusOf(original));
      expect(publicMessageOf(rebuilt), code).to.equal(publicMessageOf(original));
    }
  });

  it('keeps a refined kind as itself, and as its parent', () => {
    const rebuilt = across(new NotActiveError('retry'));
    expect(rebuilt).to.be.instanceOf(NotActiveError).and.instanceOf(UnavailableError);
    expect(rebuilt.message).to.equal('retry');
  });

  it('sends a kind the other side does not know as the nearest one it does', () => {
    const wire = toWire(new (createError('MemoQuotaError', 'KW_TEST_WIRE_QUOTA', 409, { parent: ConflictError }))('full'));
    expect(wire.codes).to.deep.equal(['KW_TEST_WIRE_QUOTA', 'KW_CONFLICT']);
    const rebuilt = fromWire({ codes: ['KW_SOMEONE_ELSES', 'KW_CONFLICT'], message: 'full' }, '');
    expect(rebuilt).to.be.instanceOf(ConflictError);
    expect(httpStatusOf(rebuilt)).to.equal(409);
  });

  it('a plain subclass crosses as the catalogue class it extends', () => {
    class LocalError extends BadRequestError {}
    expect(across(new LocalError('mine'))).to.be.instanceOf(BadRequestError);
  });

  it('makes anything else an internal error whose message names who failed, for the log only', () => {
    for (const err of [new Error('plain'), new TypeError('typed'), 'a string']) {
      const rebuilt = across(err);
      expect(rebuilt).to.be.instanceOf(InternalError);
      expect(rebuilt.message).to.match(/^plugin "p" failed: /);
      expect(publicMessageOf(rebuilt)).to.equal('internal error');
    }
    expect(across(new IntegrityError('bad tag')).message).to.equal('plugin "p" failed: bad tag');
  });

  it('takes nothing but codes and a message from the other side', () => {
    const forged = fromWire({ codes: [{ toString: () => 'KW_BAD_REQUEST' }] as unknown as string[], message: 'x' }, '');
    expect(forged).to.be.instanceOf(InternalError);
    expect(fromWire({ codes: 'KW_BAD_REQUEST' as unknown as string[], message: 'x' }, '')).to.be.instanceOf(InternalError);
  });
});
