// The shape scan that runs before a body is parsed (src/lib/json-limits.ts) counts exactly what the
// parsed value holds, whatever the text: strings with escapes and brackets, numbers, whitespace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkJsonShape } from '../src/lib/json-limits.ts';

function shape(value: unknown, depth = 1): { depth: number; keys: number; values: number; containers: number } {
  const total = { depth: 0, keys: 0, values: 1, containers: 0 };
  if (value === null || typeof value !== 'object') return total;
  total.depth = depth;
  total.containers = 1;
  const entries = Array.isArray(value) ? value.map((v) => [null, v] as const) : Object.entries(value);
  if (!Array.isArray(value)) total.keys = entries.length;
  for (const [key, item] of entries) {
    const inner = shape(item, depth + 1);
    total.depth = Math.max(total.depth, inner.depth);
    total.keys = Math.max(total.keys, inner.keys);
    total.values += inner.values + (key === null ? 0 : 1);
    total.containers += inner.containers;
  }
  return total;
}

test('the scan refuses a text exactly when its parsed value breaks a limit', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (value, spaced) => {
      const text = JSON.stringify(value, null, spaced ? 1 : undefined);
      const actual = shape(JSON.parse(text));
      const at = { maxDepth: actual.depth, maxKeys: actual.keys, maxValues: actual.values, maxContainers: actual.containers };
      assert.equal(checkJsonShape(text, at), null, text);
      if (actual.depth > 0) assert.equal(checkJsonShape(text, { ...at, maxDepth: actual.depth - 1 })?.limit, 'depth');
      if (actual.keys > 0) assert.equal(checkJsonShape(text, { ...at, maxKeys: actual.keys - 1 })?.limit, 'keys');
      assert.equal(checkJsonShape(text, { ...at, maxValues: actual.values - 1 })?.limit, 'values');
      if (actual.containers > 0) assert.equal(checkJsonShape(text, { ...at, maxContainers: actual.containers - 1 })?.limit, 'containers');
    }),
    { numRuns: 3000, seed: 13 },
  );
});
