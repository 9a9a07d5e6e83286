/** A string as a quoted SQL literal, for DDL, which binds no parameters. */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
