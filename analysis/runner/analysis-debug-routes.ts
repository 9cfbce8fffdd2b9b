import type { FastifyInstance } from 'fastify';
import type { AnalysisRunner } from './analysis-runner.js';

/**
 * `/debug/analyze`: the daemon's latest analysis (PILOT_ENABLE_ANALYSIS): when it ran, which
 * analyzers ran or were skipped, and every message with its code, level, resource and text.
 */
export function analysisDebugRoutes(runner: AnalysisRunner): (app: FastifyInstance) => void {
  return (app) => {
    app.get('/debug/analyze', async () => {
      const report = runner.latest();
      return {
        analyzedAt: report.analyzedAt ?? null,
        executed: report.executed,
        skipped: report.skipped,
        messages: report.messages.map((m) => ({ code: m.code, level: m.level, type: m.type, origin: m.origin, message: m.message })),
      };
    });
  };
}
