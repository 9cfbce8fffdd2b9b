/**
 * The specification documents (`../shared/seeds/` beside the repository). Tests that compare the
 * code with them run where the folder exists and skip, saying why, where it does not: a clone of
 * the repository alone does not have it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe } from '@jest/globals';
import { PROJECT_ROOT } from './run-bin.js';

export const SEEDS_DIR = `${PROJECT_ROOT}../shared/seeds/`;

export const SEED_FILES = {
  policies: '000_8a910b8a8ce86957.txt',
  daemon: '001_d18b38bb7ae60790.txt',
  meshctl: '002_a8acf18ccd0db79e.txt',
} as const;

export const seedsAvailable = existsSync(`${SEEDS_DIR}${SEED_FILES.daemon}`);

let reported = false;

/** The text of a seed document; '' where the folder is absent (the suites using it are skipped). */
export function readSeed(name: keyof typeof SEED_FILES): string {
  return seedsAvailable ? readFileSync(`${SEEDS_DIR}${SEED_FILES[name]}`, 'utf8') : '';
}

/** `describe`, or `describe.skip` with a printed reason where the seed documents are absent. */
export function describeWithSeeds(name: string, body: () => void): void {
  if (seedsAvailable) {
    describe(name, body);
    return;
  }
  if (!reported) {
    reported = true;
    console.log(`skipping the comparisons with the specification: ${SEEDS_DIR} is not here (a clone of the repository alone)`);
  }
  describe.skip(name, body);
}
