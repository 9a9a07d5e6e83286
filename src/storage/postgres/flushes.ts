/**
 * Statements a coalescing queue (LookupBatcher, RowWrites) has in flight at most: work arriving while they are
 * waits for one to come back and then goes together, so under load a statement carries the work of several
 * turns instead of each turn sending its own (each statement is a write to a socket and a database process
 * woken, the largest part of a lookup's cost on both sides), while work on an idle node still goes at the
 * end of its turn.
 */
const maxStatementsInFlight = 2;

/** When a coalescing queue flushes: at the end of the turn that has work, unless its statements in flight are at their limit. */
export class Flushes {
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly flush: () => void,
    private readonly hasWork: () => boolean,
  ) {}

  /** A flush at the end of this turn, unless one is due or none may go now (a statement coming back asks again). */
  request(): void {
    if (this.scheduled || this.inFlight >= maxStatementsInFlight || !this.hasWork()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Whether no flush is due and no statement is in flight. */
  get idle(): boolean {
    return !this.scheduled && this.inFlight === 0;
  }

  /** Runs a flushed statement, counted in flight until it settles. */
  async run(statement: () => Promise<void>): Promise<void> {
    this.inFlight++;
    try {
      await statement();
    } finally {
      this.inFlight--;
      this.request();
    }
  }
}
