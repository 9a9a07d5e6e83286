/**
 * Prepared statements kept by their SQL text, at most `limit` (all dropped when full: the texts in use come back at
 * once, and a page's text depends on its shape only, so few are in use). Safe on one connection because its
 * statements run one at a time, and SQLite prepares a kept statement again itself when the schema changes.
 */
export class StatementsByText<S> {
  private readonly statements = new Map<string, S>();

  constructor(private readonly prepare: (text: string) => S, private readonly limit = 500) {}

  get(text: string): S {
    let statement = this.statements.get(text);
    if (statement === undefined) {
      statement = this.prepare(text);
      if (this.statements.size >= this.limit) this.statements.clear();
      this.statements.set(text, statement);
    }
    return statement;
  }
}
