// A parse thread of `roost import` (src/import/parse-pool.ts): lines in, a batch for the store out;
// a chunk to probe first sends its objectIds and waits for those stored already.
import { parentPort, workerData } from 'node:worker_threads';
import { SessionTokens } from '../accounts/sessions.ts';
import { finishChunk, objectIdsOf, transferable, validateChunk, type ParseJob, type ValidChunk } from './parse-pool.ts';

const sessions = new SessionTokens({ secret: (workerData as { secret: string }).secret });
const seal = (token: string) => sessions.seal(token);
const probing = new Map<number, { job: ParseJob; chunk: ValidChunk }>();

function finish(id: number, job: ParseJob, chunk: ValidChunk, present: Set<string>): void {
  const parsed = finishChunk(job, chunk, present, seal);
  parentPort?.postMessage({ id, chunk: parsed }, transferable(parsed));
}

parentPort?.on('message', (message: { id: number; job: ParseJob } | { id: number; present: Set<string> }) => {
  if ('job' in message) {
    const chunk = validateChunk(message.job);
    if (!message.job.probe) return finish(message.id, message.job, chunk, new Set());
    probing.set(message.id, { job: message.job, chunk });
    parentPort?.postMessage({ id: message.id, objectIds: objectIdsOf(chunk) });
    return;
  }
  const { job, chunk } = probing.get(message.id)!;
  probing.delete(message.id);
  finish(message.id, job, chunk, message.present);
});
