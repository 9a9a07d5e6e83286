import type { ImportRecord } from '../ops-store.ts';
import { promotedColumns, readersOf } from '../sql/sql-store.ts';

/** The objects columns an import loads, in the order of each encoded row. */
export const importColumns = [
  'app_id',
  'class_name',
  'id',
  'created_at',
  'updated_at',
  'data',
  'acl',
  'readers',
  'username',
  'email',
  'mobile_phone',
  'installation_id',
  'password_hash',
  'session_digest',
  'session_cipher',
].join(', ');

const copySpecial = /[\\\t\n\r]/;
const copyEscapes: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A field of COPY's text format: tab, newline and backslash are escaped; `\N` is NULL. */
function field(value: string | null): string {
  if (value === null) return '\\N';
  return copySpecial.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => copyEscapes[c]) : value;
}

/** A text[] literal with every element quoted, so no principal can be read as NULL or split. */
function textArray(values: string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

/**
 * Records as rows of `COPY objects (importColumns) FROM STDIN` in the text format: the same
 * values the INSERT of a single object stores (src/storage/sql/sql-store.ts), built on the
 * parse thread so the main thread only passes the bytes on.
 */
export function encodeImportRows(appId: string, records: ImportRecord[]): string {
  const lines: string[] = [];
  const app = field(appId);
  for (const { object, passwordHash, session } of records) {
    const promoted = promotedColumns(object);
    lines.push(
      [
        app,
        field(object.className),
        field(object.objectId),
        String(object.createdAt),
        String(object.updatedAt),
        field(JSON.stringify(object.data)),
        field(object.acl === null ? null : JSON.stringify(object.acl)),
        field(textArray(readersOf(object.acl))),
        field(promoted.username),
        field(promoted.email),
        field(promoted.mobile_phone),
        field(promoted.installation_id),
        field(passwordHash),
        field(session?.digest ?? null),
        field(session?.cipher ?? null),
      ].join('\t'),
    );
  }
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}
