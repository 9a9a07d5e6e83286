import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from './config.ts';
import { newSecretKeyText, processSecretBox, SecretBox, SecretKeyError } from './lib/secret-box.ts';

export type SecretKeySource =
  | { kind: 'env' }
  | { kind: 'file'; path: string; created: boolean }
  | { kind: 'memory' };

/**
 * Where the keys that seal secrets in the database come from, in this order:
 * ROOST_SECRET_KEY (keys separated by commas, the first sealing), ROOST_SECRET_KEY_FILE (one a line),
 * else a `secret.key` created (0600) on first start: next to the embedded SQLite file, or in DATA_DIR for
 * PostgreSQL. The PostgreSQL default keeps `npm start` with only DATABASE_URL working (and nodes sharing a
 * working directory share the file); nodes on other machines need the same key, and one with another key
 * stops at start naming the key id it lacks (the server secret is opened there), never serving half-readable
 * apps. A key stored in the database would open what it seals to whoever dumps it, so there is none there.
 */
type KeyConfig = Pick<Config, 'databaseUrl' | 'sqlitePath' | 'dataDir' | 'secretKey' | 'secretKeyFile'>;

export function keyFilePath(config: KeyConfig): string | null {
  if (config.secretKey) return null;
  if (config.secretKeyFile) return config.secretKeyFile;
  if (config.databaseUrl) return join(config.dataDir, 'secret.key');
  if (config.sqlitePath === ':memory:') return null;
  return join(dirname(config.sqlitePath), 'secret.key');
}

export function loadSecretKeys(config: KeyConfig): { box: SecretBox; source: SecretKeySource } {
  if (config.secretKey) return { box: SecretBox.fromText(config.secretKey), source: { kind: 'env' } };
  const path = keyFilePath(config);
  if (path === null) return { box: processSecretBox(), source: { kind: 'memory' } };
  let created = false;
  if (!config.secretKeyFile && !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    // Of processes starting together, one publishes its key and the others read it. The key is written whole
    // to a file of its own, then linked into place (link never replaces a file): a plain 'wx' write let another
    // process read the file between its creation and its content, and stop on an empty key (seen in CI).
    const own = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(own, newSecretKeyText() + '\n', { mode: 0o600, flag: 'wx' });
    try {
      linkSync(own, path);
      created = true;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    } finally {
      rmSync(own, { force: true });
    }
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SecretKeyError(`cannot read the secret key file ${path}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!text.trim()) throw new SecretKeyError(`the secret key file ${path} is empty`);
  return { box: SecretBox.fromText(text, () => readFileSync(path, 'utf8')), source: { kind: 'file', path, created } };
}

/** Puts a new key first in the key file (it seals from now on); the old ones stay, to open what they sealed. */
export function prependKeyToFile(path: string): string {
  const key = newSecretKeyText();
  writeFileSync(path, `${key}\n${readFileSync(path, 'utf8')}`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return key;
}
