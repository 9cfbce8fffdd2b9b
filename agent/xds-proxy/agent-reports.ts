/** A request the agent itself sends upstream, unasked: a health report. */
export interface AgentReport {
  readonly typeUrl: string;
  /** The request's `error_detail`: set for a report of failure. */
  readonly errorDetail?: { readonly code: number; readonly message: string };
}

/**
 * The agent's reports on the proxy's streams: each report is written into every open relayed
 * stream (once past its first request), and the last of each type is written into each new
 * stream after its first request, so the daemon learns it again after a reconnect.
 */
export interface AgentReports {
  send(report: AgentReport): void;
  /** The last report of each type. */
  latest(): readonly AgentReport[];
  /** Calls `listener` with each report sent from now on; returns what stops it. */
  listen(listener: (report: AgentReport) => void): () => void;
}

export function newAgentReports(): AgentReports {
  const last = new Map<string, AgentReport>();
  const listeners = new Set<(report: AgentReport) => void>();
  return {
    send(report) {
      last.set(report.typeUrl, report);
      for (const listener of [...listeners]) listener(report);
    },
    latest: () => [...last.values()],
    listen(listener) {
      const own = (report: AgentReport): void => listener(report);
      listeners.add(own);
      return () => listeners.delete(own);
    },
  };
}
