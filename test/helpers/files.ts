import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Client } from './client.ts';

/** A folder of its own for a test file's local-disk backend, removed after the tests. */
export async function filesFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'roost-files-'));
  after(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** Every file under a folder, as paths relative to it (`.partial/` included). */
export async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1)).sort();
}

/** A request with a body of bytes (no Content-Type unless given): the file routes read bodies as they come. */
export function sendBytes(client: Client, method: string, path: string, body: Uint8Array<ArrayBuffer> | string, headers: Record<string, string> = {}) {
  return client.request(method, path, { raw: body, headers: { 'Content-Type': '', ...headers } });
}
