/**
 * Headless Chromium for the UI tests, from the binary the @sparticuz/chromium package ships
 * (brotli-packed, installed by `npm ci` like any package), driven by playwright-core. The binary is
 * unpacked once into node_modules/.cache, a directory of this checkout's owner, never into a shared
 * /tmp path another user could have planted a file at. Nothing is downloaded.
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

/** The package's root and version: the nearest folder above its entry point whose package.json names it. */
function packageRoot(): { root: string; version: string } {
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium')));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (name === '@sparticuz/chromium' && version) return { root: dir, version };
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('@sparticuz/chromium: package.json not found; run npm ci');
    dir = parent;
  }
}

/** Unpacks the Chromium binary (once per package version) and returns its path. */
export async function chromiumExecutable(): Promise<string> {
  const { root, version } = packageRoot();
  const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const dir = path.join(projectRoot, 'node_modules', '.cache', 'keywarden-chromium', version);
  const executable = path.join(dir, 'chromium');
  if (existsSync(executable)) return executable;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Unpacked beside its final name and renamed, so a test run cut short never leaves half a binary.
  const partial = `${executable}.${process.pid}.partial`;
  await pipeline(createReadStream(path.join(root, 'bin', 'chromium.br')), createBrotliDecompress(), createWriteStream(partial, { mode: 0o700 }));
  renameSync(partial, executable);
  return executable;
}

/**
 * Launches headless Chromium with a fresh profile (playwright makes a temporary one), no sandbox
 * (tests may run as root), and nothing that reaches out to the network on its own.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumExecutable(),
    headless: true,
    chromiumSandbox: false,
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/** Where the browser tests save their screenshots (`test-output/ui`, ignored by git). */
export const UI_SCREENSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-output/ui');

/**
 * A page in a fresh context of `browser`, 15 s per step, that records each Content-Security-Policy
 * violation the console reports and each uncaught page error into `record`.
 */
export async function watchedPage(
  browser: Browser,
  options: BrowserContextOptions,
  record: { readonly cspViolations: string[]; readonly pageErrors: string[] },
): Promise<Page> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) record.cspViolations.push(message.text());
  });
  page.on('pageerror', (err) => record.pageErrors.push(err.message));
  return page;
}
