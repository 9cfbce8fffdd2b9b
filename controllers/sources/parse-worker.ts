/**
 * The worker side of the parse pool: parses and checks the config files it is sent, as
 * `checkConfigFile` does on the main thread, and answers with the results (as JSON text where
 * that is exact, `json-transfer.ts`). Until its first job it warms up (`parse-warm-up.ts`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkConfigFile } from './config-file-checker.js';
import { toTransfer } from './json-transfer.js';
import { claimChunk, type ParseAnswer, type ParseJob } from './parse-job.js';
import { warmUpParsing } from './parse-warm-up.js';

const clusterScoped: ReadonlySet<string> = new Set((workerData as { clusterScopedKinds?: string[] } | null)?.clusterScopedKinds ?? []);
let hadJob = false;

parentPort?.on('message', (job: ParseJob) => {
  hadJob = true;
  const answer: ParseAnswer = {
    id: job.id,
    results: claimChunk(job.claims, job.chunk) ? job.files.map((file) => toTransfer(checkConfigFile(file.path, file.text, clusterScoped))) : null,
  };
  parentPort?.postMessage(answer);
});

void warmUpParsing({ isBusy: () => hadJob, clusterScoped });
