// A parse thread of `roost import` (src/import/parse-pool.ts): lines in, a batch for the store out.
import { parentPort, workerData } from 'node:worker_threads';
import { SessionTokens } from '../accounts/sessions.ts';
import { parseChunk, transferable, type ParseJob } from './parse-pool.ts';

const sessions = new SessionTokens({ secret: (workerData as { secret: string }).secret });
const seal = (token: string) => sessions.seal(token);

parentPort?.on('message', ({ id, job }: { id: number; job: ParseJob }) => {
  const chunk = parseChunk(job, seal);
  parentPort?.postMessage({ id, chunk }, transferable(chunk));
});
