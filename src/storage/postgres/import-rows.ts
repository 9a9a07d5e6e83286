import type { ImportRecord } from '../ops-store.ts';
import { objectColumns, toRow, type ObjectRow } from '../sql/object-row.ts';

/** The objects columns an import loads, in the order of each encoded row. */
export const importColumns = objectColumns.join(', ');

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

/** A column of the row in COPY's text format: JSON as text, readers as a text[] literal. */
function copyField(row: ObjectRow, column: keyof ObjectRow): string {
  switch (column) {
    case 'created_at':
    case 'updated_at':
      return String(row[column]);
    case 'geo_lat':
    case 'geo_lng':
      return row[column] === null ? '\\N' : String(row[column]);
    case 'data':
      return field(JSON.stringify(row.data));
    case 'acl':
      return field(row.acl === null ? null : JSON.stringify(row.acl));
    case 'readers':
      return field(textArray(row.readers));
    default:
      return field(row[column]);
  }
}

/**
 * Records as rows of `COPY objects (importColumns) FROM STDIN` in the text format: the rows of
 * src/storage/sql/object-row.ts, as every insert stores them, built on the parse thread so the
 * main thread only passes the bytes on.
 */
export function encodeImportRows(appId: string, records: ImportRecord[]): string {
  const lines: string[] = [];
  for (const { object, passwordHash, session } of records) {
    const row = toRow(appId, object, { passwordHash, session });
    lines.push(objectColumns.map((column) => copyField(row, column)).join('\t'));
  }
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}
