import type { GenerateRequest } from '../generator.js';
import type { PushReason } from '../push/push-request.js';

const TEST_REASONS: ReadonlyMap<PushReason, number> = new Map([['unknown', 1]]);

/** A generator's request in tests: the subscription and what changed, as a push started at time 0. */
export function generateRequest(request: Omit<GenerateRequest, 'reasons' | 'startedAt'>): GenerateRequest {
  return { reasons: TEST_REASONS, startedAt: 0, ...request };
}
