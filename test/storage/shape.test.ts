// The storage layer's shape (#14): every SQL difference sits in the two dialect files, and stores
// answer outcomes, never the domain's errors. A scan of the sources, so a new branch on the
// database's kind or a store that words an error fails here rather than in review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// The checkout's own sources (the suite may run compiled, from .build): npm test runs at its root.
const root = process.cwd();

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

const storage = [...sources(join(root, 'src/storage')), ...sources(join(root, 'src/import'))];

test('no branch on the database kind outside the database folders (src/storage/sqlite, src/storage/postgres)', () => {
  const branch = /\bkind\s*[!=]==?\s*'(postgres|sqlite)'|'(postgres|sqlite)'\s*[!=]==?\s*[\w.]*kind\b/;
  const exempt = (path: string) => /\/(sqlite|postgres)\//.test(path);
  const found = storage.filter((path) => !exempt(path) && branch.test(readFileSync(join(root, path), 'utf8')));
  assert.deepEqual(found, []);
});

test('stores neither build nor carry ApiError: they answer outcomes and the domain words the error', () => {
  const found = storage.filter((path) => path.startsWith('src/storage/') && /\bApiError\b|lib\/errors\.ts/.test(readFileSync(join(root, path), 'utf8')));
  assert.deepEqual(found, []);
});
