/**
 * The runtime: a clone runs on the Node LTS it brings (the devDependency "node"), whatever Node
 * the machine has, because npm puts that Node first on the PATH of every script.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';

describe('runtime', () => {
  it('runs the tests on the Node 24 LTS the project pins, not the machine\'s', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { devDependencies: Record<string, string> };
    expect(process.version).to.equal(`v${pkg.devDependencies.node}`);
    expect(process.versions.node.split('.')[0]).to.equal('24');
  });
});
