import { ApiError } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import type { AppRecord } from '../objects/types.ts';
import type { AppDeletion, Store } from '../storage/store.ts';
import { newAppKey } from '../lib/ids.ts';
import { isAppId, keysFrom, newKeys, type AppKeys } from './keys.ts';
import { applySettingsPatch, mergeSettings, type AppSettings } from './settings.ts';

export type { AppKeys };

/**
 * What creating an application with given keys came to. `taken`: an application has that id already;
 * `sameKeys`: its keys are the ones given (none given counts as the same), as on a re-run of one migration.
 */
export type AppCreation =
  | { outcome: 'created'; keys: AppKeys }
  | { outcome: 'taken'; appId: string; sameKeys: boolean }
  | { outcome: 'refused'; message: string };

/**
 * The applications this server hosts. Lookups are cached briefly per node (appCacheMs) because
 * every request needs one; a settings change is seen by other nodes within that time.
 */
export class AppRegistry {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly cacheMs: number;
  private readonly cache = new Map<string, { app: AppRecord | null; until: number }>();

  constructor(options: { store: Store; clock: Clock; cacheMs: number }) {
    this.store = options.store;
    this.clock = options.clock;
    this.cacheMs = options.cacheMs;
  }

  private newApp(name: string, keys: AppKeys): AppRecord {
    return { ...keys, name, settings: {}, createdAt: this.clock.now(), retiredKeys: [] };
  }

  /** A new application with new keys. */
  async create(name: string): Promise<AppKeys> {
    const creation = await this.createWithKeys(name, {});
    if (creation.outcome !== 'created') throw new Error(`application not created: ${JSON.stringify(creation)}`);
    return creation.keys;
  }

  /**
   * A new application that keeps the keys given (an app moving off the hosted service, whose clients
   * in the field send them), the missing ones generated. The name defaults to the id.
   */
  async createWithKeys(name: string | undefined, given: Partial<AppKeys>): Promise<AppCreation> {
    const keys = keysFrom(given);
    if ('refused' in keys) return { outcome: 'refused', message: keys.refused };
    if (await this.store.createApp(this.newApp(name ?? keys.appId, keys))) {
      this.cache.delete(keys.appId);
      return { outcome: 'created', keys };
    }
    const existing = await this.store.getApp(keys.appId);
    const sameKeys = existing !== null && (['appKey', 'masterKey'] as const).every((key) => given[key] === undefined || given[key] === existing[key]);
    return { outcome: 'taken', appId: keys.appId, sameKeys };
  }

  list(): Promise<AppRecord[]> {
    return this.store.listApps();
  }

  async get(appId: string): Promise<AppRecord | null> {
    // An id no application can have is not looked up (nor cached, where it would push out real ones).
    if (!isAppId(appId)) return null;
    const now = this.clock.now();
    const cached = this.cache.get(appId);
    if (cached && cached.until > now) return cached.app;
    const app = await this.store.getApp(appId);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(appId, { app, until: now + this.cacheMs });
    return app;
  }

  /** Reads the application straight from the store (the operator's commands). */
  freshApp(appId: string): Promise<AppRecord | null> {
    return this.store.getApp(appId);
  }

  /** Reads settings straight from the store, for decisions that must see the latest switch. */
  async freshSettings(appId: string): Promise<AppSettings | null> {
    const app = await this.store.getApp(appId);
    return app ? mergeSettings(app.settings) : null;
  }

  async updateSettings(appId: string, patch: unknown): Promise<AppSettings | null> {
    const result = await this.store.updateAppSettings(appId, (current) => {
      try {
        return applySettingsPatch(mergeSettings(current), patch);
      } catch (error) {
        if (error instanceof ApiError) return { refused: error };
        throw error;
      }
    });
    this.cache.delete(appId);
    if (result && 'refused' in result) throw result.refused;
    return result;
  }

  /**
   * A new key of that kind in place of the current one, which stays accepted for graceMs (0: refused at
   * once). Other nodes see the change within their cache time (APP_CACHE_MS). Null: no such app.
   */
  async rotate(appId: string, kind: 'appKey' | 'masterKey', graceMs: number): Promise<AppRecord | null> {
    const app = await this.store.rotateAppKey(appId, { kind, newKey: newAppKey(), graceMs, now: this.clock.now() });
    this.cache.delete(appId);
    return app;
  }

  /** What deleting the application would remove; null: no such app. */
  contents(appId: string): Promise<AppDeletion | null> {
    return this.store.appContents(appId);
  }

  async delete(appId: string): Promise<boolean> {
    const deleted = await this.store.deleteApp(appId);
    this.cache.delete(appId);
    return deleted;
  }

  /**
   * On first start with an empty store, an application named "default" so the server is usable at
   * once. Check and create are one store step: of nodes starting together, exactly one creates it.
   */
  async ensureDefault(): Promise<AppKeys | null> {
    const app = this.newApp('default', newKeys());
    if (!(await this.store.createFirstApp(app))) return null;
    return { appId: app.appId, appKey: app.appKey, masterKey: app.masterKey };
  }
}
