import { ALL_ANALYZERS } from '../all-analyzers.js';
import type { Analyzer } from '../analyzer.js';
import { buildSnapshot } from '../build-snapshot.js';
import { formatMessage, type AnalysisMessage } from '../messages.js';
import { runAnalyzers } from '../run-analyzers.js';
import type { InputName } from '../snapshot.js';
import { KIND_NAMES, apiVersionOf, type KindName } from '../../crds/index.js';
import type { ConfigAnalysisFeed, MeshModel, SourceSet } from '../../controllers/index.js';
import {
  runnableOf,
  type Clock,
  type KubeObject,
  type Logger,
  type Manager,
  type Runnable,
  type Source,
  type SourceEvent,
  type TimerHandle,
} from '../../runtime/index.js';

/** Where the messages about one mesh resource go: its status writer (Kubernetes mode). */
export interface AnalysisSink {
  analysis(kind: KindName, key: { namespace: string; name: string }, messages: readonly AnalysisMessage[]): void;
}

export interface AnalysisRunnerOptions {
  /** Where the mesh kinds come from. */
  readonly sources: SourceSet;
  /** Where Namespaces, Services and Pods come from, when the daemon reads them (`--registries orch`). */
  readonly registrySources?: SourceSet;
  /** Where Secrets come from, when the daemon reads them (gateway credentials): only their names and keys reach the analyzers. */
  readonly secretSources?: SourceSet;
  readonly model: MeshModel;
  readonly rootNamespace: string;
  /** The quiet period after a change before analysing (`PILOT_DEBOUNCE_AFTER`). */
  readonly debounceMs: number;
  /** The longest a change waits under continuous churn (`PILOT_DEBOUNCE_MAX`). */
  readonly debounceMaxMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly sink?: AnalysisSink;
  readonly analyzers?: readonly Analyzer[];
}

export interface AnalysisReport {
  readonly analyzedAt: string | undefined;
  readonly messages: readonly AnalysisMessage[];
  readonly executed: readonly string[];
  readonly skipped: readonly string[];
}

export interface AnalysisRunner {
  /** Leader-elected: one replica analyses and writes status. */
  readonly runnable: Runnable;
  latest(): AnalysisReport;
}

const REGISTRY_KINDS = [
  ['v1', 'Namespace'],
  ['v1', 'Service'],
  ['v1', 'Pod'],
] as const;

/**
 * `PILOT_ENABLE_ANALYSIS`: after each change to the objects the daemon watches (debounced), runs
 * the analyzers over them (the mesh kinds as written, valid or not; Namespaces, Services and Pods;
 * the mesh config in effect). New messages are logged; each mesh resource whose messages changed,
 * appeared or disappeared is handed to the sink, so its status follows.
 */
export interface AnalysisSetupOptions {
  /** From the config side: the sources, the debounce and the status writers. */
  readonly feed: ConfigAnalysisFeed;
  readonly model: MeshModel;
  readonly rootNamespace: string;
  readonly log: Logger;
}

/** Registers the daemon's analysis with the manager (leader-elected), its messages going to the status writers. */
export function setupAnalysisWithManager(manager: Manager, options: AnalysisSetupOptions): AnalysisRunner {
  const { feed } = options;
  const runner = newAnalysisRunner({
    sources: feed.sources,
    ...(feed.registrySources ? { registrySources: feed.registrySources } : {}),
    ...(feed.secretSources ? { secretSources: feed.secretSources } : {}),
    model: options.model,
    rootNamespace: options.rootNamespace,
    debounceMs: feed.debounceMs,
    debounceMaxMs: feed.debounceMaxMs,
    clock: manager.clock,
    log: options.log,
    sink: {
      analysis: (kind, key, messages) =>
        feed.statusMessages(
          kind,
          key,
          messages.map((m) => ({ level: m.level, path: '', type: { code: m.code, name: m.type }, message: m.message })),
        ),
    },
  });
  manager.add(runner.runnable);
  return runner;
}

export function newAnalysisRunner(options: AnalysisRunnerOptions): AnalysisRunner {
  const sourced: (readonly [SourceSet, string, string])[] = [
    ...KIND_NAMES.map((kind) => [options.sources, apiVersionOf(kind), kind] as const),
    ...(options.registrySources ? REGISTRY_KINDS.map(([apiVersion, kind]) => [options.registrySources as SourceSet, apiVersion, kind] as const) : []),
    ...(options.secretSources ? [[options.secretSources, 'v1', 'Secret'] as const] : []),
  ];
  const kinds = sourced.map(([, apiVersion, kind]) => [apiVersion, kind] as const);
  const watched: Source<KubeObject>[] = sourced.map(([set, apiVersion, kind]) => set.sourceFor(apiVersion, kind));
  const complete: InputName[] = [
    'MeshObject',
    ...KIND_NAMES,
    ...(options.registrySources ? (['Namespace', 'Service', 'Pod'] as const) : []),
    ...(options.secretSources ? (['Secret'] as const) : []),
  ];
  // Schema problems are the config reconciler's to report (with field paths, on every replica).
  const analyzers = (options.analyzers ?? ALL_ANALYZERS).filter((analyzer) => !analyzer.inputs.includes('MeshObject'));
  let report: AnalysisReport = { analyzedAt: undefined, messages: [], executed: [], skipped: [] };
  let byResource = new Map<string, AnalysisMessage[]>();

  const analyse = (): void => {
    // Listed objects come without apiVersion and kind (the list has them); each source holds one kind.
    const objects = watched.flatMap((source, index) => {
      const [apiVersion, kind] = kinds[index] ?? ['', ''];
      return source.store.list().map((object) => ({ object: { ...object, apiVersion, kind } }));
    });
    const snapshot = buildSnapshot({
      objects,
      meshConfig: options.model.meshConfig(),
      complete,
      domainSuffix: options.model.domain,
      rootNamespace: options.rootNamespace,
    });
    const result = runAnalyzers(snapshot, analyzers);
    const next = new Map<string, AnalysisMessage[]>();
    for (const message of result.messages) {
      if (!message.resource) continue;
      const id = `${message.resource.kind}/${message.resource.namespace}/${message.resource.name}`;
      next.set(id, [...(next.get(id) ?? []), message]);
    }
    const before = new Set(report.messages.map(formatMessage));
    for (const message of result.messages)
      if (!before.has(formatMessage(message)))
        options.log.info({ code: message.code, level: message.level, origin: message.origin }, `analysis: ${formatMessage(message)}`);
    for (const id of new Set([...byResource.keys(), ...next.keys()])) {
      const now = next.get(id) ?? [];
      if (JSON.stringify(now.map(formatMessage)) === JSON.stringify((byResource.get(id) ?? []).map(formatMessage))) continue;
      const [kind = '', namespace = '', name = ''] = id.split('/');
      if ((KIND_NAMES as readonly string[]).includes(kind)) options.sink?.analysis(kind as KindName, { namespace, name }, now);
    }
    byResource = next;
    report = { analyzedAt: new Date(options.clock.now()).toISOString(), messages: result.messages, executed: result.executed, skipped: result.skipped };
  };

  const runnable = runnableOf(
    'analysis',
    async (signal) => {
      await Promise.all(watched.map((source) => source.waitForSync(signal)));
      let timer: TimerHandle | undefined;
      let pendingSince: number | undefined;
      const schedule = (): void => {
        timer?.cancel();
        pendingSince ??= options.clock.now();
        const delay = Math.max(0, Math.min(options.debounceMs, pendingSince + options.debounceMaxMs - options.clock.now()));
        timer = options.clock.setTimer(() => {
          timer = undefined;
          pendingSince = undefined;
          try {
            analyse();
          } catch (error) {
            options.log.error({ err: error }, 'analysis failed');
          }
        }, delay);
      };
      // Status writes (ours among them) change nothing analysers read: only a change of content re-analyses,
      // or the daemon's own writes would keep postponing the analysis they result from.
      const contents = new Map<string, string>();
      const onEvent =
        (source: number) =>
        (event: SourceEvent<KubeObject>): void => {
          const id = `${source}/${event.object.metadata?.namespace ?? ''}/${event.object.metadata?.name ?? ''}`;
          if (event.type === 'delete') {
            contents.delete(id);
          } else {
            const content = analysedContentOf(event.object);
            if (contents.get(id) === content) return;
            contents.set(id, content);
          }
          schedule();
        };
      const unsubscribes = watched.map((source, index) => source.subscribe(onEvent(index)));
      analyse();
      return () => {
        timer?.cancel();
        for (const unsubscribe of unsubscribes) unsubscribe();
      };
    },
    { needLeaderElection: true },
  );
  return { runnable, latest: () => report };
}

/** What analyzers read of an object: everything but its status and the server's bookkeeping. */
function analysedContentOf(object: KubeObject): string {
  const { status: _status, metadata, ...rest } = object as KubeObject & { status?: unknown };
  return JSON.stringify({ labels: metadata?.labels ?? {}, annotations: metadata?.annotations ?? {}, rest });
}
