import { fail } from '../lib/errors.ts';
import { table } from '../lib/lookup.ts';

/**
 * What the hosted service's clients send that Roost does not do yet (README "Not supported (yet)"):
 * refused with an error naming it, never taken for a field name (105), silently ignored, or stored
 * as plain data that would mean something else later.
 */
const queryOperators = table<string>({
  // None today: every query operator of the hosted service is served (#16). A feature not there yet goes here.
});

/** Refuses a query operator of a feature Roost does not have yet (400 code 102, naming it). */
export function refuseQueryOperator(operator: string): void {
  const feature = queryOperators[operator];
  if (feature) fail('queryNotSupported', `Not supported yet: ${operator} (${feature}).`);
}
