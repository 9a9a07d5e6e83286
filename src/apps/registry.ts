import { ApiError } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { newAppId, newAppKey } from '../lib/ids.ts';
import type { AppRecord } from '../objects/types.ts';
import type { Store } from '../storage/store.ts';
import { applySettingsPatch, mergeSettings, type AppSettings } from './settings.ts';

export interface AppKeys {
  appId: string;
  appKey: string;
  masterKey: string;
}

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

  private newApp(name: string): AppRecord {
    return { appId: newAppId(), name, appKey: newAppKey(), masterKey: newAppKey(), settings: {}, createdAt: this.clock.now() };
  }

  async create(name: string): Promise<AppKeys> {
    const app = this.newApp(name);
    await this.store.createApp(app);
    return { appId: app.appId, appKey: app.appKey, masterKey: app.masterKey };
  }

  list(): Promise<AppRecord[]> {
    return this.store.listApps();
  }

  async get(appId: string): Promise<AppRecord | null> {
    const now = this.clock.now();
    const cached = this.cache.get(appId);
    if (cached && cached.until > now) return cached.app;
    const app = await this.store.getApp(appId);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(appId, { app, until: now + this.cacheMs });
    return app;
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
   * On first start with an empty store, an application named "default" so the server is usable at
   * once. Check and create are one store step: of nodes starting together, exactly one creates it.
   */
  async ensureDefault(): Promise<AppKeys | null> {
    const app = this.newApp('default');
    if (!(await this.store.createFirstApp(app))) return null;
    return { appId: app.appId, appKey: app.appKey, masterKey: app.masterKey };
  }
}
