// A parse thread of `roost import` (src/import/parse-pool.ts): lines in, records out.
import { parentPort, workerData } from 'node:worker_threads';
import { SessionTokens } from '../accounts/sessions.ts';
import { parseExportLine } from './export-format.ts';
import type { ParseJob } from './parse-pool.ts';

const sessions = new SessionTokens({ secret: (workerData as { secret: string }).secret });
const seal = (token: string) => sessions.seal(token);

parentPort?.on('message', ({ id, job }: { id: number; job: ParseJob }) => {
  const results = job.lines.map((line) => parseExportLine(line, { className: job.className, now: job.now, seal }));
  parentPort?.postMessage({ id, results });
});
