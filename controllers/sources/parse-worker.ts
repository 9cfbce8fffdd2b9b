/**
 * The worker side of the parse pool: parses the config files it is sent, as `parseConfigFile`
 * does on the main thread, and answers with the results (plain data, cloned back).
 */
import { parentPort } from 'node:worker_threads';
import { parseConfigFile } from './config-file-parser.js';

interface ParseJob {
  readonly id: number;
  readonly files: readonly { readonly path: string; readonly text: string }[];
}

parentPort?.on('message', (job: ParseJob) => {
  parentPort?.postMessage({ id: job.id, results: job.files.map((file) => parseConfigFile(file.path, file.text)) });
});
