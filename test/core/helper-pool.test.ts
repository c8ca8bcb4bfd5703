import { expect } from 'chai';
import { helperPoolFlag, NODE_POOL_SIZE } from '../../core/helper-pool.js';

describe("V8's helper pool sized to the cores", () => {
  it('asks for as many helpers as the process may use cores, when that is fewer than Node gives', () => {
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 1 })).to.equal('--v8-pool-size=1');
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 2 })).to.equal('--v8-pool-size=2');
    expect(helperPoolFlag({ nodeFlags: ['--enable-source-maps'], parallelism: 3 })).to.equal('--v8-pool-size=3');
  });

  it("leaves Node's pool alone on a machine with as many cores as it has helpers, or more", () => {
    expect(NODE_POOL_SIZE).to.equal(4);
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 4 })).to.equal(undefined);
    expect(helperPoolFlag({ nodeFlags: [], parallelism: 64 })).to.equal(undefined);
  });

  it("keeps the size an operator gave Node, in either spelling, even a larger one", () => {
    expect(helperPoolFlag({ nodeFlags: ['--v8-pool-size=8'], parallelism: 2 })).to.equal(undefined);
    expect(helperPoolFlag({ nodeFlags: ['--v8_pool_size=1'], parallelism: 2 })).to.equal(undefined);
    expect(helperPoolFlag({ nodeFlags: ['--v8-pool-size', '3'], parallelism: 2 })).to.equal(undefined);
  });
});
