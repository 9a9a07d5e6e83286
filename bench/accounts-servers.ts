// The servers bench/accounts.ts reads Roost's accounts against: its peer, Parse Server (bench/peer, own
// package.json and lockfile, installed with `npm ci` on first use), and the floor of a password login
// (bench/bare-login.js: only the work a login cannot skip, on Roost's own database and users).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { benchDir, freePort, log, roostDir, run, startServer, type ServerProcess } from './lib.ts';

const peerDir = join(benchDir, 'peer');

export function ensurePeerInstalled(): void {
  if (existsSync(join(peerDir, 'node_modules', 'parse-server', 'package.json'))) return;
  log('installing the peer (npm ci --prefix bench/peer)');
  run('npm', ['ci', '--prefix', peerDir, '--no-audit', '--no-fund']);
}

export async function startPeer(databaseUrl: string): Promise<{ server: ServerProcess; keys: Record<string, string> }> {
  const port = await freePort();
  const keys = {
    appId: 'bench' + randomBytes(6).toString('hex'),
    masterKey: randomBytes(16).toString('hex'),
    restKey: randomBytes(16).toString('hex'),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URI: databaseUrl,
    PORT: String(port),
    PARSE_APP_ID: keys.appId,
    PARSE_MASTER_KEY: keys.masterKey,
    PARSE_REST_KEY: keys.restKey,
    NODE_ENV: 'production',
  };
  delete env.NODE_OPTIONS;
  const server = await startServer({
    name: 'parse-server',
    command: process.execPath,
    args: [join(peerDir, 'server.js')],
    env,
    cwd: peerDir,
    port,
    healthPath: '/parse/health',
    timeoutMs: 120_000,
  });
  return { server, keys };
}

export function peerVersion(): string {
  try {
    return run(process.execPath, ['-p', "require('./node_modules/parse-server/package.json').version"], { cwd: peerDir }).trim();
  } catch {
    return '?';
  }
}

/** The bare login server on Roost's database (`databaseUrl`), logging in the users of application `appId`. */
export async function startBareLogin(databaseUrl: string, appId: string): Promise<ServerProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, APP_ID: appId, ROOST_DIR: roostDir };
  delete env.NODE_OPTIONS;
  return startServer({
    name: 'bare login',
    command: process.execPath,
    args: [join(benchDir, 'bare-login.js')],
    env,
    port,
    healthPath: '/health',
  });
}
