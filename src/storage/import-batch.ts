import type { ImportBatch, ImportRecord } from './ops-store.ts';
import { postgresDialect } from './postgres/dialect.ts';
import type { SqlDialect } from './sql/dialect.ts';
import { sqliteDialect } from './sqlite/dialect.ts';
import type { Store } from './store.ts';

const dialects: Record<Store['kind'], SqlDialect> = { sqlite: sqliteDialect, postgres: postgresDialect };

/**
 * Shapes records for `store.ops.importObjects` of a store of this kind, as its dialect does.
 * The import's parse threads know the store only by its kind.
 */
export function prepareImportBatch(kind: Store['kind'], appId: string, className: string, records: ImportRecord[]): ImportBatch {
  return dialects[kind].importBatch(appId, className, records);
}
