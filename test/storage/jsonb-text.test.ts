// jsonbTextAsJson (src/storage/postgres/jsonb-text.ts): a page sent as stored on PostgreSQL reads each object's
// data as jsonb's text and makes it JSON.stringify's without parsing it. Held here to the parse, on the text
// PostgreSQL itself writes for values of every kind: keys jsonb and JavaScript order differently (array-index keys),
// numbers jsonb writes otherwise (1e21, 5e-7, 1.50), every escape, blanks and separators inside strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { postgresUrl, storeKind } from '../helpers/databases.ts';
import { jsonbTextAsJson } from '../../src/storage/postgres/jsonb-text.ts';

const values: unknown[] = [
  {},
  [],
  { a: 1 },
  { title: 'item 1', group: 1, score: 7919, tags: ['bench', 'g1'], owner: 'bench' },
  { n: -0.1, big: 1e21, small: 5e-7, sum: 0.1 + 0.2, wide: 123456789012345680000, tiny: -1e-7, half: 1.5, zero: -0, safe: 2 ** 53, t: 1e15, d15: 123456789012345, d16: 1234567890123456, neg: -42 },
  { b: 1, a: { 10: 'ten', 9: 'nine', z: {} }, _c: [{ 2: 'two', 1: 'one' }] },
  { '01': 1, '1a': 2, '-1': 3, ' 1': 4, '': 5 },
  { 4294967295: 1, 4294967294: 2, a: 3 },
  { text: 'é 中文 😀 "quoted" back\\slash\nnewline\ttab \u2028 \u001f \u007f \b\f\r </script> , : {"a": 1}' },
  { 'key with ": ': 'v, "x": 1', '"': '\\', '\\"': '\\\\"', '\\': '"1": 2' },
  { nested: [[], {}, [{}], { a: [1, { b: null }] }, [[[-1.25e-3]]]] },
  { t: true, f: false, n: null, s: 'true', e: '', u: ' ' },
  { owner: { __type: 'Pointer', className: '_User', objectId: 'u1' }, when: { __type: 'Date', iso: '2024-01-02T03:04:05.006Z' } },
];

test('jsonb text made JSON.stringify\'s equals parsing and stringifying it', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  const client = new pg.Client({ connectionString: postgresUrl! });
  await client.connect();
  try {
    for (const value of values) {
      const { rows } = await client.query<{ text: string; parsed: unknown }>('SELECT $1::jsonb::text AS text, $1::jsonb AS parsed', [JSON.stringify(value)]);
      assert.equal(jsonbTextAsJson(rows[0].text), JSON.stringify(rows[0].parsed), rows[0].text);
    }
    // Text no JavaScript value writes: numbers with a scale of their own, and a zero with a sign.
    const { rows } = await client.query<{ text: string; parsed: unknown }>(`SELECT v::text AS text, v AS parsed FROM
      (VALUES ('[1.50, 0.0, -0, 1E3, 1e-10, 100000000000000000000000]'::jsonb), ('{"a": 2.000}'::jsonb)) t(v)`);
    for (const row of rows) assert.equal(jsonbTextAsJson(row.text), JSON.stringify(row.parsed), row.text);
  } finally {
    await client.end();
  }
});
