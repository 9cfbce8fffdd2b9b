import { sleepWith, type Clock, type TimerHandle } from '../clock.js';

interface PendingTimer {
  id: number;
  dueAt: number;
  fn: () => void;
}

/** A clock that moves only when a test calls `advance()`; timers fire in due order. */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 0;
  private pending: PendingTimer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const timer: PendingTimer = { id: this.nextId++, dueAt: this.current + Math.max(0, delayMs), fn };
    this.pending.push(timer);
    return { cancel: () => (this.pending = this.pending.filter((t) => t.id !== timer.id)) };
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepWith((fn, ms) => this.setTimer(fn, ms), delayMs, signal);
  }

  /** Number of timers not yet fired. */
  pendingTimers(): number {
    return this.pending.length;
  }

  /** Moves time forward, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.pending.filter((t) => t.dueAt <= target).sort((a, b) => a.dueAt - b.dueAt || a.id - b.id)[0];
      if (!due) break;
      this.pending = this.pending.filter((t) => t.id !== due.id);
      this.current = Math.max(this.current, due.dueAt);
      due.fn();
    }
    this.current = target;
  }
}
