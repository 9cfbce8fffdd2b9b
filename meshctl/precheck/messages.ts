/** The levels of the analysis messages, worst first (the reference's sort order). */
export const MESSAGE_LEVELS = ['Error', 'Warning', 'Info'] as const;
export type MessageLevel = (typeof MESSAGE_LEVELS)[number];

/**
 * The analysis message types precheck raises. Codes the reference has keep its numbers
 * (`IST0141` → `MSH0141`); codes of ours alone start at `MSH1001`, above any of the reference's,
 * so that neither ever means two things.
 */
export const MESSAGE_TYPES = {
  InvalidWebhook: { code: 'MSH0139', level: 'Error' },
  InsufficientPermissions: { code: 'MSH0141', level: 'Error' },
  UnsupportedKubernetesVersion: { code: 'MSH0142', level: 'Error' },
  ExistingInstallation: { code: 'MSH1001', level: 'Info' },
  RevisionConflict: { code: 'MSH1002', level: 'Error' },
} as const satisfies Record<string, { code: string; level: MessageLevel }>;

export type MessageTypeName = keyof typeof MESSAGE_TYPES;

export interface AnalysisMessage {
  readonly type: MessageTypeName;
  readonly code: string;
  readonly level: MessageLevel;
  /** What the message is about: `Cluster`, or `<Kind> <name>[.<namespace>]`. */
  readonly origin: string;
  readonly message: string;
}

export function analysisMessage(type: MessageTypeName, origin: string, message: string): AnalysisMessage {
  return { type, ...MESSAGE_TYPES[type], origin, message };
}

/** The log format of `analyze`: `<Level> [<CODE>] (<origin>) <message>`. */
export function formatMessage(message: AnalysisMessage): string {
  return `${message.level} [${message.code}]${message.origin === '' ? '' : ` (${message.origin})`} ${message.message}`;
}

/** Sorted as the reference sorts: level (worst first), code, origin, then the whole line; duplicates dropped. */
export function sortedDeduped(messages: readonly AnalysisMessage[]): AnalysisMessage[] {
  const rank = (m: AnalysisMessage): number => MESSAGE_LEVELS.indexOf(m.level);
  const sorted = [...messages].sort(
    (a, b) => rank(a) - rank(b) || compare(a.code, b.code) || compare(a.origin, b.origin) || compare(formatMessage(a), formatMessage(b)),
  );
  return sorted.filter((m, i) => i === 0 || formatMessage(m) !== formatMessage(sorted[i - 1] as AnalysisMessage));
}

/** Warnings and errors make an installation unsafe; infos are only shown. */
export function isWarningOrWorse(message: AnalysisMessage): boolean {
  return message.level === 'Error' || message.level === 'Warning';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
