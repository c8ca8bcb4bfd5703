/** The configuration file's `plugin "<name>" { … }` blocks, and `cloud_auth` read as the cloud auth method's. */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, parseConfig, pluginConfigOf } from '../../../core/config/config.js';
import { CONFIG_BASE, configRefusal, useScratchConfig } from '../../helpers/config-files.js';

describe('plugin blocks of the configuration file', () => {
  const scratch = useScratchConfig('kw-plugin-config-');
  const hcl = scratch.hcl;

  it('hands each plugin its own block as plain values, nested blocks and lists included', () => {
    const config = loadConfig(
      hcl(
        [
          'plugin "cloud" {',
          '  allow_sha1_signatures = true',
          '}',
          'plugin "my-engine" {',
          '  region  = "eu-west-1"',
          '  retries = 3',
          '  zones   = ["a", "b"]',
          '  limits {',
          '    burst = 10',
          '  }',
          '}',
        ].join('\n'),
      ),
    );
    expect(pluginConfigOf(config, 'cloud')).to.deep.equal({ allow_sha1_signatures: true });
    expect(pluginConfigOf(config, 'my-engine')).to.deep.equal({ region: 'eu-west-1', retries: 3, zones: ['a', 'b'], limits: { burst: 10 } });
    expect(pluginConfigOf(config, 'transit')).to.deep.equal({});
  });

  it('reads the JSON form, and a later file\'s block replaces an earlier file\'s', () => {
    const first = hcl('plugin "kv" {\n  a = 1\n}\n', 'a.hcl');
    const second = path.join(scratch.dir(), 'b.json');
    writeFileSync(second, JSON.stringify({ plugin: [{ kv: { b: 2 } }] }));
    expect(pluginConfigOf(loadConfig([first, second]), 'kv')).to.deep.equal({ b: 2 });
    expect(pluginConfigOf(parseConfig({ storage: { inmem: {} }, listener: { tcp: { tls_disable: true } }, plugin: { kv: { c: true } } }, CONFIG_BASE), 'kv')).to.deep.equal({ c: true });
  });

  it('refuses a plugin named twice in one file, a key set twice in a block, and a name a plugin cannot have, with the line', () => {
    const twice = hcl('plugin "kv" {\n  a = 1\n}\nplugin "kv" {\n  a = 2\n}\n');
    expect(configRefusal(() => loadConfig(twice))).to.equal(`${twice}:8: plugin.kv: set twice in this file (first on line 5)`);
    const key = hcl('plugin "kv" {\n  a = 1\n  a = 2\n}\n');
    expect(configRefusal(() => loadConfig(key))).to.equal(`${key}:7: plugin.kv.a: set twice in this block (first on line 6)`);
    const name = hcl('plugin "Not_A_Name" {}\n');
    expect(configRefusal(() => loadConfig(name))).to.match(/:5: plugin\.Not_A_Name: a plugin name is lower-case letters, digits and "-"$/);
    expect(configRefusal(() => loadConfig(hcl('plugin {}\n')))).to.match(/plugin: expected a labeled block such as plugin "cloud"/);
  });

  it('keeps loading the deprecated cloud_auth block, as the block of the cloud auth method under both its names', () => {
    const config = loadConfig(hcl('cloud_auth {\n  allow_sha1_signatures = true\n}\n'));
    expect(config.cloudAuth).to.deep.equal({ allowSha1Signatures: true });
    expect(pluginConfigOf(config, 'cloud')).to.deep.equal({ allow_sha1_signatures: true });
    expect(pluginConfigOf(config, 'aws')).to.deep.equal({ allow_sha1_signatures: true });
    expect(pluginConfigOf(config, 'kv')).to.deep.equal({});
  });

  it('refuses cloud_auth beside a block of the cloud auth method, naming both', () => {
    const file = hcl('cloud_auth {\n  allow_sha1_signatures = true\n}\nplugin "aws" {\n  allow_sha1_signatures = false\n}\n');
    expect(configRefusal(() => loadConfig(file))).to.equal(
      `${file}:5: cloud_auth: cloud_auth is the older spelling of plugin "aws" { … } (${file}:8): keep only the plugin block`,
    );
  });
});
