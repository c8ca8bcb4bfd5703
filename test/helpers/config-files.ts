/** Configuration-file tests: the refusal a configuration gets, and HCL files in a scratch folder. */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../core/config/config.js';

/** The folder relative paths of an inline document are resolved against. */
export const CONFIG_BASE = path.resolve('/etc/keywarden');

/** The smallest HCL a server starts with: in-memory storage, plain HTTP. */
export const MINIMAL_HCL = 'storage "inmem" {}\nlistener "tcp" {\n  tls_disable = true\n}\n';

/** The ConfigError message `load` throws, or a failure when the configuration is accepted. */
export function configRefusal(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  expect.fail('expected the configuration to be refused');
}

/**
 * A scratch folder made before each test of the calling `describe` and removed after it;
 * `hcl(text)` writes MINIMAL_HCL followed by `text` to a file there and gives its path.
 */
export function useScratchConfig(prefix: string): { dir: () => string; hcl: (text: string, name?: string) => string } {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    hcl: (text, name = 'server.hcl') => {
      const file = path.join(dir, name);
      writeFileSync(file, MINIMAL_HCL + text);
      return file;
    },
  };
}
