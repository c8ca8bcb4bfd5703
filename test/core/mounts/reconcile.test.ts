import { expect } from 'chai';
import { reconcile, type Serving } from '../../../core/mounts/reconcile.js';
import { defaultMountConfig, routePrefixOf, type MountEntry } from '../../../core/mounts/mount-entry.js';

function entry(path: string, uuid: string, more: Partial<MountEntry> = {}): MountEntry {
  return {
    table: 'secret',
    path,
    type: 'notes',
    description: '',
    uuid,
    accessor: `notes_${uuid}`,
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
    options: null,
    config: defaultMountConfig(),
    plugin_version: '',
    ...more,
  };
}

const serving = (e: MountEntry): Serving => ({ routePrefix: routePrefixOf(e), entry: e });

describe('reconcile (HA: following another node\'s mount tables)', () => {
  it('starts what is new, stops what is gone, and keeps the rest with its stored entry', () => {
    const kept = serving(entry('kept/', 'u1'));
    const gone = serving(entry('gone/', 'u2'));
    const added = entry('added/', 'u3');
    const plan = reconcile([kept, gone], [kept.entry, added]);
    expect(plan.start).to.deep.equal([added]);
    expect(plan.stop).to.deep.equal([gone]);
    expect(plan.retune).to.deep.equal([{ mount: kept, entry: kept.entry, rebuild: false }]);
  });

  it('replaces a mount whose prefix holds another UUID (disabled and enabled anew)', () => {
    const old = serving(entry('x/', 'old'));
    const anew = entry('x/', 'new');
    const plan = reconcile([old], [anew]);
    expect(plan.stop).to.deep.equal([old]);
    expect(plan.start).to.deep.equal([anew]);
    expect(plan.retune).to.deep.equal([]);
  });

  it('follows a moved mount: the UUID at a new prefix starts, the old prefix stops', () => {
    const before = serving(entry('from/', 'u'));
    const moved = entry('to/', 'u');
    const plan = reconcile([before], [moved]);
    expect(plan.start).to.deep.equal([moved]);
    expect(plan.stop).to.deep.equal([before]);
  });

  it('rebuilds a tuned mount only when its options changed', () => {
    const live = serving(entry('x/', 'u', { options: { version: '1' } }));
    const described = entry('x/', 'u', { options: { version: '1' }, description: 'tuned' });
    expect(reconcile([live], [described]).retune[0]).to.include({ rebuild: false, entry: described });
    const upgraded = entry('x/', 'u', { options: { version: '2' } });
    expect(reconcile([live], [upgraded]).retune[0]).to.include({ rebuild: true, entry: upgraded });
  });

  it('never stops or rebuilds a built-in mount', () => {
    const builtin = serving(entry('sys/', 's', { builtin: true, options: { a: '1' } }));
    expect(reconcile([builtin], []).stop).to.deep.equal([]);
    expect(reconcile([builtin], [entry('sys/', 's', { builtin: true, options: { a: '2' } })]).retune[0]!.rebuild).to.equal(false);
  });
});
