import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, Logger } from 'pino';

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type Level = (typeof levels)[number];

/**
 * A request's `request.log`: the pino child carrying its request id is made when the request
 * writes its first line, not for every request. Making it (bindings through redaction) was ~2%
 * of a get-by-id's CPU (bench/RESULTS.md, Objects), and most requests write no line at all
 * when LOG_LEVEL is above info. The lines written are the child's, unchanged.
 */
class RequestLogger {
  #child: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get pino(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.pino.level = level;
  }

  /** pino's own check; without a level of its own the child answers as its parent does. */
  isLevelEnabled(level: string): boolean {
    const decides = this.#child ?? (this.#options.level === undefined ? this.#parent : this.pino);
    return (decides as Partial<Logger>).isLevelEnabled?.(level) ?? true;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.pino.child(bindings, options);
  }

  silent(): void {}
}

interface RequestLogger extends Pick<FastifyBaseLogger, Level> {}

for (const level of levels) {
  RequestLogger.prototype[level] = function (this: RequestLogger, ...args: unknown[]) {
    if (!this.isLevelEnabled(level)) return;
    (this.pino[level] as (...line: unknown[]) => void)(...args);
  };
}

/** Fastify's `childLoggerFactory`: request loggers that make their pino child on first use. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options);
}
