/**
 * Data across the isolation boundary: what the framework puts into a request's or a response's
 * data crosses the structured clone of the plugin's channel and comes back as it was.
 */
import { expect } from 'chai';
import { JsonText } from '../../../../core/framework/json-text.js';
import { ExactNumber, exactBody, keepExactText, stringifyExact } from '../../../../core/framework/exact-json.js';
import { InternalError } from '../../../../core/errors.js';
import { fromWireValue, toWireValue } from '../../../../core/plugins/isolation/wire-values.js';

/** Through the wire format and back, as the channel's structured clone carries it. */
const across = (value: unknown): unknown => fromWireValue(structuredClone(toWireValue(value)));

describe('data across the isolation boundary', () => {
  it('carries a batch written as JSON text, whose clone alone fails', () => {
    const results = new JsonText('[{"ciphertext":"vault:v1:AA","reference":""}]', () => [{ ciphertext: 'vault:v1:AA', reference: '' }]);
    const response = { data: { batch_results: results } };
    expect(() => structuredClone(response)).to.throw();
    const back = across(response) as { data: { batch_results: JsonText } };
    expect(back.data.batch_results).to.be.instanceOf(JsonText);
    expect(back.data.batch_results.text).to.equal(results.text);
    expect(back.data.batch_results.toJSON()).to.deep.equal(results.toJSON());
  });

  it('keeps an exact number an exact number, with every digit', () => {
    const back = across({ data: { n: new ExactNumber('12345678901234567890123'), list: [new ExactNumber('1e400')] } }) as { data: Record<string, unknown> };
    expect(back.data.n).to.be.instanceOf(ExactNumber);
    expect(stringifyExact(back.data)).to.equal('{"n":12345678901234567890123,"list":[1e400]}');
  });

  it('keeps the text of a body with inexact numbers, for exactBody', () => {
    const text = '{"n":12345678901234567890123,"s":"x"}';
    const body = keepExactText(JSON.parse(text) as Record<string, unknown>, text);
    const crossed = across(body) as Record<string, unknown>;
    expect(stringifyExact(exactBody(crossed))).to.equal(stringifyExact(exactBody(body)));
    expect((exactBody(crossed)!.n as ExactNumber).text).to.equal('12345678901234567890123');
    expect(exactBody(across(JSON.parse(text)) as Record<string, unknown>)).to.equal(undefined);
  });

  it('leaves data with nothing to carry as it is', () => {
    const data = { a: [1, 'two', { three: true }], b: null, bytes: new Uint8Array([1, 2]) };
    expect(toWireValue(data)).to.equal(data);
    expect(across(data)).to.deep.equal(data);
  });

  it('refuses JSON text from a plugin that is not one JSON value, or an exact number that is not a number', () => {
    expect(() => fromWireValue(new Map([['keywarden:json-text', '1},"auth":{"client_token":"forged"']]))).to.throw(InternalError);
    expect(() => fromWireValue(new Map([['keywarden:exact-number', '1,"x":2']]))).to.throw(InternalError);
  });

  it('leaves a map that is not one of its own as a map', () => {
    const map = new Map([['other', 1]]);
    expect(fromWireValue(map)).to.equal(map);
  });
});
