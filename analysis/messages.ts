/** The levels of the analysis messages, worst first (the reference's sort order). */
export const MESSAGE_LEVELS = ['Error', 'Warning', 'Info'] as const;
export type MessageLevel = (typeof MESSAGE_LEVELS)[number];

/**
 * Every analysis message type. Codes the reference has keep its numbers and levels where the
 * meaning is the same (`IST0101` → `MSH0101`); codes of ours alone start at `MSH1001`, above any
 * of the reference's, so that neither ever means two things.
 */
export const MESSAGE_TYPES = {
  InternalError: { code: 'MSH0001', level: 'Error' },
  Deprecated: { code: 'MSH0002', level: 'Warning' },
  ReferencedResourceNotFound: { code: 'MSH0101', level: 'Error' },
  NamespaceNotInjected: { code: 'MSH0102', level: 'Info' },
  PodMissingProxy: { code: 'MSH0103', level: 'Warning' },
  // MSH0104 (GatewayPortNotOnWorkload) and MSH0105 (ProxyImageMismatch, per pod) are retired as the
  // reference's IST0104 and IST0105 are: MSH0162 and MSH0158 (per namespace) report them.
  SchemaValidationError: { code: 'MSH0106', level: 'Error' },
  MisplacedAnnotation: { code: 'MSH0107', level: 'Warning' },
  UnknownAnnotation: { code: 'MSH0108', level: 'Warning' },
  ConflictingMeshGatewayVirtualServiceHosts: { code: 'MSH0109', level: 'Error' },
  VirtualServiceDestinationPortSelectorRequired: { code: 'MSH0112', level: 'Error' },
  MTLSPolicyConflict: { code: 'MSH0113', level: 'Error' },
  DeploymentAssociatedToMultipleServices: { code: 'MSH0116', level: 'Warning' },
  DeploymentRequiresServiceAssociated: { code: 'MSH0117', level: 'Warning' },
  PortNameIsNotUnderNamingConvention: { code: 'MSH0118', level: 'Info' },
  JwtFailureDueToInvalidServicePortPrefix: { code: 'MSH0119', level: 'Warning' },
  InvalidRegexp: { code: 'MSH0122', level: 'Warning' },
  NamespaceMultipleInjectionLabels: { code: 'MSH0123', level: 'Warning' },
  InvalidAnnotation: { code: 'MSH0125', level: 'Warning' },
  NoMatchingWorkloadsFound: { code: 'MSH0127', level: 'Warning' },
  NoServerCertificateVerificationDestinationLevel: { code: 'MSH0128', level: 'Warning' },
  NoServerCertificateVerificationPortLevel: { code: 'MSH0129', level: 'Warning' },
  VirtualServiceUnreachableRule: { code: 'MSH0130', level: 'Warning' },
  VirtualServiceIneffectiveMatch: { code: 'MSH0131', level: 'Info' },
  VirtualServiceHostNotFoundInGateway: { code: 'MSH0132', level: 'Warning' },
  SchemaWarning: { code: 'MSH0133', level: 'Warning' },
  ServiceEntryAddressesRequired: { code: 'MSH0134', level: 'Warning' },
  DeprecatedAnnotation: { code: 'MSH0135', level: 'Info' },
  AlphaAnnotation: { code: 'MSH0136', level: 'Info' },
  DeploymentConflictingPorts: { code: 'MSH0137', level: 'Warning' },
  GatewayDuplicateCertificate: { code: 'MSH0138', level: 'Warning' },
  InvalidWebhook: { code: 'MSH0139', level: 'Error' },
  IngressRouteRulesNotAffected: { code: 'MSH0140', level: 'Warning' },
  InsufficientPermissions: { code: 'MSH0141', level: 'Error' },
  UnsupportedKubernetesVersion: { code: 'MSH0142', level: 'Error' },
  LocalhostListener: { code: 'MSH0143', level: 'Error' },
  InvalidApplicationUID: { code: 'MSH0144', level: 'Warning' },
  ConflictingGateways: { code: 'MSH0145', level: 'Error' },
  ImageAutoWithoutInjectionWarning: { code: 'MSH0146', level: 'Warning' },
  ImageAutoWithoutInjectionError: { code: 'MSH0147', level: 'Error' },
  NamespaceInjectionEnabledByDefault: { code: 'MSH0148', level: 'Info' },
  JwtClaimBasedRoutingWithoutRequestAuthN: { code: 'MSH0149', level: 'Error' },
  ExternalNameServiceTypeInvalidPortName: { code: 'MSH0150', level: 'Warning' },
  PodsProxyImageMismatchInNamespace: { code: 'MSH0158', level: 'Warning' },
  InvalidGatewayCredential: { code: 'MSH0161', level: 'Error' },
  GatewayPortNotDefinedOnService: { code: 'MSH0162', level: 'Warning' },
  DestinationRuleSubsetNotSelectPods: { code: 'MSH0173', level: 'Error' },
  UnknownDestinationRuleHost: { code: 'MSH0174', level: 'Warning' },
  JwksUriFetchUnrestricted: { code: 'MSH0175', level: 'Warning' },
  ExistingInstallation: { code: 'MSH1001', level: 'Info' },
  RevisionConflict: { code: 'MSH1002', level: 'Error' },
  ProxyRevisionMismatch: { code: 'MSH1003', level: 'Warning' },
  PortLevelMtlsPortNotFound: { code: 'MSH1004', level: 'Warning' },
  DenyRuleHttpFieldsOnTcpPort: { code: 'MSH1005', level: 'Warning' },
  /** An AuthorizationPolicy principal (or service account) whose service account no pod of its namespace runs as. */
  PrincipalServiceAccountNotUsed: { code: 'MSH1006', level: 'Warning' },
} as const satisfies Record<string, { code: string; level: MessageLevel }>;

export type MessageTypeName = keyof typeof MESSAGE_TYPES;

/** The resource a message is about, as suppressions and status writes address it. */
export interface ResourceKey {
  readonly kind: string;
  readonly name: string;
  /** Empty for cluster-scoped resources. */
  readonly namespace: string;
}

export interface AnalysisMessage {
  readonly type: MessageTypeName;
  readonly code: string;
  readonly level: MessageLevel;
  /** What the message is about: `Cluster`, or `<Kind> <name>[.<namespace>]`. */
  readonly origin: string;
  /** Where the resource came from when it was read from a file: `<file>:<line>`. */
  readonly reference?: string;
  readonly resource?: ResourceKey;
  readonly message: string;
}

export function analysisMessage(type: MessageTypeName, origin: string, message: string): AnalysisMessage {
  return { type, ...MESSAGE_TYPES[type], origin, message };
}

/** `<Kind> <name>.<namespace>`, or `<Kind> <name>` for a cluster-scoped resource: the reference's origin. */
export function originOf(resource: ResourceKey): string {
  return `${resource.kind} ${resource.name}${resource.namespace === '' ? '' : `.${resource.namespace}`}`;
}

/** The log format of `analyze`: `<Level> [<CODE>] (<origin>[ <file>:<line>]) <message>`. */
export function formatMessage(message: AnalysisMessage): string {
  const where = [message.origin, message.reference].filter((part) => part !== undefined && part !== '').join(' ');
  return `${message.level} [${message.code}]${where === '' ? '' : ` (${where})`} ${message.message}`;
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
  return atLeast(message.level, 'Warning');
}

/** Whether `level` is as bad as `threshold` or worse. */
export function atLeast(level: MessageLevel, threshold: MessageLevel): boolean {
  return MESSAGE_LEVELS.indexOf(level) <= MESSAGE_LEVELS.indexOf(threshold);
}

export function messageTypeOfCode(code: string): MessageTypeName | undefined {
  return (Object.keys(MESSAGE_TYPES) as MessageTypeName[]).find((name) => MESSAGE_TYPES[name].code === code);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
