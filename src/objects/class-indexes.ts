import { ApiError } from '../lib/errors.ts';
import type { ClassIndexStore } from '../storage/class-index-store.ts';
import { checkIndexName, parseIndexSpec, shownIndex } from './index-spec.ts';
import { checkClassName } from './values.ts';

type ShownIndex = ReturnType<typeof shownIndex>;

/**
 * The indexes users declare on their classes, as the REST endpoint and `roost index` both use them:
 * names and specs checked, the store's outcomes worded as catalogue errors.
 */
export class ClassIndexes {
  private readonly store: ClassIndexStore;

  constructor(options: { store: ClassIndexStore }) {
    this.store = options.store;
  }

  async list(appId: string, className: string): Promise<ShownIndex[]> {
    checkClassName(className);
    return (await this.store.list(appId, className)).map(shownIndex);
  }

  /** `body`: {"name": "byScore", "keys": {"score": -1}, "unique": false}; answers at once, the index building. */
  async create(appId: string, className: string, body: Parameters<typeof parseIndexSpec>[0]): Promise<ShownIndex> {
    checkClassName(className);
    const index = await this.store.create(appId, className, parseIndexSpec(body));
    if (index === 'exists') throw new ApiError('indexExists');
    return shownIndex(index);
  }

  async drop(appId: string, className: string, name: string): Promise<void> {
    checkClassName(className);
    checkIndexName(name);
    if (!(await this.store.drop(appId, className, name))) throw new ApiError('indexNotFound');
  }
}
