import type { LogLevel } from './logger.js';

/** One logging scope as introspection (ControlZ, `meshctl admin log`) shows and changes it. */
export interface ScopeInfo {
  name: string;
  description: string;
  outputLevel: LogLevel;
  stackTraceLevel: LogLevel;
  logCallers: boolean;
}

export type ScopePatch = Partial<Pick<ScopeInfo, 'outputLevel' | 'stackTraceLevel' | 'logCallers'>>;

/** Run-time control over logging scopes. `setScope` throws a MeshError for an unknown scope. */
export interface LoggingControl {
  listScopes(): ScopeInfo[];
  getScope(name: string): ScopeInfo | undefined;
  setScope(name: string, patch: ScopePatch): ScopeInfo;
}
