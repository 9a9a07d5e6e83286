import { importedIdentities } from './identity-store.ts';
import type { EncodedBatch, ImportBatch, ImportRecord } from './ops-store.ts';
import { encodeImportRows } from './postgres/import-rows.ts';
import type { Store } from './store.ts';

const encoder = new TextEncoder();

/**
 * Shapes records for `store.ops.importObjects` of a store of this kind. Pure and synchronous,
 * so the import's parse threads run it: PostgreSQL gets its rows encoded for COPY there (a
 * buffer the thread hands over without copying), SQLite the records themselves.
 */
export function prepareImportBatch(kind: Store['kind'], appId: string, className: string, records: ImportRecord[]): ImportBatch {
  return kind === 'sqlite' ? { kind: 'records', appId, className, records } : encodeImportBatch(appId, className, records);
}

/** PostgreSQL's batch: the rows in COPY's text format, and per record its id and authData identities. */
export function encodeImportBatch(appId: string, className: string, records: ImportRecord[]): EncodedBatch {
  return {
    kind: 'encoded',
    appId,
    className,
    objectIds: records.map((r) => r.object.objectId),
    identities: importedIdentities(className, records.map((r) => r.object)),
    rows: encoder.encode(encodeImportRows(appId, records)),
  };
}
