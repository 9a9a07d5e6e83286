/**
 * At most `parallel` pieces of work at once; the others wait in arrival order. A finishing one hands its
 * turn straight to the next in line.
 */
export class Turns {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly parallel: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.parallel) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
