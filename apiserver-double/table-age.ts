/** Kubernetes' short human duration of a timestamp's age as of `nowMs`: 45s, 3m20s, 5h, 12d. */
export function age(timestamp: unknown, nowMs: number): string {
  if (typeof timestamp !== 'string' && !(timestamp instanceof Date)) return '<unknown>';
  const seconds = Math.max(0, Math.floor((nowMs - new Date(timestamp).getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 192) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}
