import { expect } from 'chai';
import { EXTERNAL_MEMORY_FLAG, externalMemoryFlag, helperPoolFlag, NODE_POOL_SIZE, startFlags } from '../../core/start-flags.js';

const node24 = '13.6.233.17-node.37';

describe("V8's helper pool sized to the cores", () => {
  it('asks for as many helpers as the process may use cores, when that is fewer than Node gives', () => {
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 1, v8Version: node24 })).to.equal('--v8-pool-size=1');
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 2, v8Version: node24 })).to.equal('--v8-pool-size=2');
    expect(helperPoolFlag({ nodeFlags: ['--enable-source-maps'], parallelism: 3, v8Version: node24 })).to.equal('--v8-pool-size=3');
  });

  it("leaves Node's pool alone on a machine with as many cores as it has helpers, or more", () => {
    expect(NODE_POOL_SIZE).to.equal(4);
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 4, v8Version: node24 })).to.equal(undefined);
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 64, v8Version: node24 })).to.equal(undefined);
  });

  it("keeps the size an operator gave Node, in either spelling, even a larger one", () => {
    expect(helperPoolFlag({ nodeFlags: ['--v8-pool-size=8'], parallelism: 2, v8Version: node24 })).to.equal(undefined);
    expect(helperPoolFlag({ nodeFlags: ['--v8_pool_size=1'], parallelism: 2, v8Version: node24 })).to.equal(undefined);
    expect(helperPoolFlag({ nodeFlags: ['--v8-pool-size', '3'], parallelism: 2, v8Version: node24 })).to.equal(undefined);
  });
});

describe("Buffers' memory counted in V8's heap limit", () => {
  it("is asked for on Node 24's V8, beside the pool size", () => {
    expect(externalMemoryFlag({ nodeFlags: [], parallelism: 8, v8Version: node24 })).to.equal(EXTERNAL_MEMORY_FLAG);
    expect(startFlags({ nodeFlags: [], parallelism: 2, v8Version: node24 })).to.deep.equal(['--v8-pool-size=2', EXTERNAL_MEMORY_FLAG]);
    expect(startFlags({ nodeFlags: [], parallelism: 8, v8Version: node24 })).to.deep.equal([EXTERNAL_MEMORY_FLAG]);
  });

  it('is not given to a V8 it was not measured on: an unknown flag would stop Node from starting', () => {
    expect(externalMemoryFlag({ nodeFlags: [], parallelism: 2, v8Version: '12.4.254.21-node.33' })).to.equal(undefined);
    expect(externalMemoryFlag({ nodeFlags: [], parallelism: 2, v8Version: '14.1.146.11-node.14' })).to.equal(undefined);
    expect(startFlags({ nodeFlags: [], parallelism: 8, v8Version: '14.1.146.11-node.14' })).to.deep.equal([]);
  });

  it("keeps the operator's choice, either way and in either spelling", () => {
    for (const flag of [EXTERNAL_MEMORY_FLAG, '--no-external-memory-accounted-in-global-limit', '--external_memory_accounted_in_global_limit', '--no_external_memory_accounted_in_global_limit']) {
      expect(externalMemoryFlag({ nodeFlags: [flag], parallelism: 2, v8Version: node24 }), flag).to.equal(undefined);
    }
    expect(startFlags({ nodeFlags: ['--v8-pool-size=2', '--no-external-memory-accounted-in-global-limit'], parallelism: 2, v8Version: node24 })).to.deep.equal([]);
  });
});
