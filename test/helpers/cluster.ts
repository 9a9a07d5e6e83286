import { testDatabase, type TestDatabase } from './databases.ts';
import { spawnRoost, type RoostProcess } from './processes.ts';

export interface NodePair {
  database: TestDatabase;
  a: RoostProcess;
  b: RoostProcess;
  /** The "default" application node A created. */
  keys: { appId: string; appKey: string; masterKey: string };
  stop(): Promise<void>;
}

/** Two Roost processes on one fresh database (and whatever `env` adds, such as one Redis). */
export async function startNodePair(env: Record<string, string>): Promise<NodePair> {
  const database = await testDatabase();
  const a = await spawnRoost({ ...database.env, ...env, LOG_LEVEL: 'info' });
  const b = await spawnRoost({ ...database.env, ...env, LOG_LEVEL: 'info' });
  return {
    database,
    a,
    b,
    keys: a.defaultKeys!,
    async stop() {
      await a.stop();
      await b.stop();
      await database.drop();
    },
  };
}
