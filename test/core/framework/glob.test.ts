/** Glob matching as Vault's login methods do it (github.com/ryanuber/go-glob). */
import { expect } from 'chai';
import { globMatch } from '../../../core/framework/glob.js';

describe('globMatch', () => {
  const cases: [string, string, boolean][] = [
    ['*', '', true],
    ['*', 'anything', true],
    ['api', 'api', true],
    ['api', 'api-2', false],
    ['team-*', 'team-billing', true],
    ['team-*', 'teams', false],
    ['*-prod', 'payments-prod', true],
    ['repo:acme/*:ref:refs/heads/main', 'repo:acme/app:ref:refs/heads/main', true],
    ['repo:acme/*:ref:refs/heads/main', 'repo:acme/app:ref:refs/heads/main-evil', false],
    ['repo:acme/*:ref:refs/heads/main', 'repo:evil/x:repo:acme/y:ref:refs/heads/main', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['ab*ba', 'aba', false],
    ['**', 'x', true],
    ['a.c', 'abc', false],
  ];
  for (const [pattern, value, matches] of cases) {
    it(`${matches ? 'matches' : 'does not match'} "${value}" with "${pattern}"`, () => {
      expect(globMatch(pattern, value)).to.equal(matches);
    });
  }
});
