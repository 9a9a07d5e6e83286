// Review of e2b2d15 (issue #13, point 1): `$regex` must be one language on both stores. Seeded
// random patterns of the dialect are checked three ways on fixed texts: RE2 itself (re2js on the
// pattern as written, with its flags), the flag-free RE2 spelling SQLite runs, and, with
// PostgreSQL, the ARE translation PostgreSQL runs. All three must agree on every text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { RE2JS } from 're2js';
import { parseRegex, re2Program } from '../src/objects/regex.ts';
import { postgresRegex } from '../src/storage/postgres/regex.ts';
import { postgresUrl } from './helpers/databases.ts';

const atoms = [
  'a', 'b', 'A', 'B', 'x', '1', '_', '-', ' ', '.', '\\.', '\\n', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S',
  '[a-c]', '[^ab]', '[[:alpha:]]', '[[:^digit:]]', '[\\d-]', '[é-ü]', '\\b', '\\B', '^', '$', '\\A', '\\z',
  'é', 'É', 'k', 's', 'ß', 'ſ', '\\x{212a}', '\\Qa.\\E', '\\Q*\\E',
];

const pattern: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...atoms),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => a + b),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => `(${a}|${b})`),
    fc.tuple(tie('node'), fc.constantFrom('*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?')).map(([a, q]) => `(?:${a})${q}`),
    fc.tuple(fc.constantFrom('i', 'm', 's', '-i', 'is', 'U'), tie('node')).map(([f, a]) => `(?${f}:${a})`),
    fc.tuple(fc.constantFrom('i', 'm', 's'), tie('node')).map(([f, a]) => `(?${f})${a}`),
  ),
})).node;

const texts = fc.sample(
  fc.array(fc.constantFrom('a', 'b', 'A', 'B', 'é', 'É', 'k', 'K', '\u212a', 's', 'S', 'ſ', 'ß', '\n', ' ', '1', '_', '.', '-', 'x', 'ü', '*'), { maxLength: 6 }).map((c) => c.join('')),
  { numRuns: 60, seed: 13 },
);
texts.push('');

const flagBits = (options: string) =>
  (options.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (options.includes('s') ? RE2JS.DOTALL : 0) | (options.includes('m') ? RE2JS.MULTILINE : 0);

test('random patterns match the same texts in RE2, on SQLite and on PostgreSQL', async () => {
  const client = postgresUrl ? new pg.Client({ connectionString: postgresUrl }) : null;
  await client?.connect();
  try {
    await fc.assert(
      fc.asyncProperty(pattern, fc.constantFrom('', 'i', 'm', 's', 'ims'), async (source, options) => {
        const regex = parseRegex(source, options);
        const native = RE2JS.compile(source, flagBits(options));
        const expected = texts.map((text) => native.test(text));
        assert.deepEqual(texts.map((text) => re2Program(regex.re2).test(text)), expected, `RE2 spelling ${regex.re2}`);
        if (client) {
          const are = postgresRegex(regex.tree);
          const { rows } = await client.query('SELECT t ~ $2 AS m FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i', [texts, are]);
          assert.deepEqual(rows.map((row) => row.m), expected, `ARE ${are}`);
        }
      }),
      { seed: 1313, numRuns: 800 },
    );
  } finally {
    await client?.end();
  }
});
