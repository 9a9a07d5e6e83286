import assert from 'node:assert/strict';
import type { Response } from './helpers/client.ts';

/**
 * Guesses evaluated per window at most: more than 6 failures lock (SPEC §3.2), so the 7th guess
 * is still checked and every later one refused with 219 (#13 point 2).
 */
export const evaluated = 7;

/** The codes of a burst's answers, counted ({ 210: n, 219: m }); every answer must be a 400. */
export function codes(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) {
    assert.equal(response.status, 400, response.text);
    counts[response.body.code] = (counts[response.body.code] ?? 0) + 1;
  }
  return counts;
}
