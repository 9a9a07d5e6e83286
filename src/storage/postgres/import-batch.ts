import { importedIdentities } from '../identity-store.ts';
import type { EncodedBatch, ImportRecord } from '../ops-store.ts';
import { encodeImportRows } from './import-rows.ts';

const encoder = new TextEncoder();

/**
 * PostgreSQL's import batch: the rows in COPY's text format (a buffer a parse thread hands over
 * without copying), and per record its id and authData identities.
 */
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
