import type { Analyzer } from './analyzer.js';
import { webhookAnalyzer } from './analyzers/webhook-analyzer.js';

/** Every analyzer, in the order `-L` lists them (by name). */
export const ALL_ANALYZERS: readonly Analyzer[] = [webhookAnalyzer].sort((a, b) => (a.name < b.name ? -1 : 1));
