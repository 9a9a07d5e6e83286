import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { catalogue } from '../src/lib/errors.ts';

const readmeRows = readFileSync('README.md', 'utf8')
  .split('\n')
  .map((line) => /^\| (\d+) \| (\d{3}) \| `(\w+)` \| (.+) \|$/.exec(line))
  .filter((match): match is RegExpExecArray => match !== null)
  .map(([, code, status, name, meaning]) => ({ code: Number(code), status: Number(status), name, meaning }));

test('every catalogue entry is in the README error table, with its code, status and message', () => {
  for (const [name, entry] of Object.entries(catalogue)) {
    const row = readmeRows.find((r) => r.name === name);
    assert.ok(row, `README lacks a row for ${name}`);
    assert.deepEqual(row, { code: entry.code, status: entry.status, name, meaning: entry.message });
  }
});

test('the README error table lists nothing the catalogue does not have', () => {
  for (const row of readmeRows) assert.ok(row.name in catalogue, `README lists unknown error ${row.name}`);
  assert.equal(readmeRows.length, Object.keys(catalogue).length);
});

test('a code means one thing: entries sharing a code share the HTTP status', () => {
  const statusOf = new Map<number, number>();
  for (const entry of Object.values(catalogue)) {
    const seen = statusOf.get(entry.code);
    assert.ok(seen === undefined || seen === entry.status, `code ${entry.code} has two statuses`);
    statusOf.set(entry.code, entry.status);
  }
});

test('every status is a client error, except an outage', () => {
  for (const [name, entry] of Object.entries(catalogue)) {
    assert.ok(entry.status >= 400 && (entry.status < 500 || entry.status === 503), name);
  }
});
