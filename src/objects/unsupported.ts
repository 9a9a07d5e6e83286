import { fail } from '../lib/errors.ts';
import { table } from '../lib/lookup.ts';

/**
 * What the hosted service's clients send that Roost does not do yet (README "Not supported (yet)"):
 * refused with an error naming it, never taken for a field name (105), silently ignored, or stored
 * as plain data that would mean something else later.
 */
const queryOperators = table({
  $relatedTo: 'relations',
});

const writeOperations = table({ AddRelation: 'relations', RemoveRelation: 'relations' });

/** Refuses a query operator of a feature Roost does not have yet (400 code 102, naming it). */
export function refuseQueryOperator(operator: string): void {
  const feature = queryOperators[operator];
  if (feature) fail('queryNotSupported', `Not supported yet: ${operator} (${feature}).`);
}

/** Refuses an `__op` of a feature Roost does not have yet (400 code 1, naming it). */
export function refuseWriteOperation(op: unknown): void {
  const feature = typeof op === 'string' ? writeOperations[op] : undefined;
  if (feature) fail('notSupported', `Not supported yet: ${op as string} (${feature}).`);
}
