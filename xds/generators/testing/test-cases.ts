/** Test support for the generator golden cases (not exported from the package). */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { validateResource, type TypedResource } from '../../../crds/index.js';
import { newMeshModel, serviceFromObject, workloadFromPod, type MeshModelWriter } from '../../../controllers/index.js';
import type { KubeObject } from '../../../controllers/runtime/index.js';
import { jsonToStruct, parseProxy, type JsonValue, type Proxy } from '../../index.js';

export const TEST_DOMAIN = 'cluster.local';
const CLUSTER_ID = 'cluster-a';

export interface GeneratorCase {
  model: MeshModelWriter;
  proxy: Proxy;
  /** The routes the `ProxyNode` document asks for (RDS cases). */
  routeNames: string[];
}

/** The case names of a folder: its `<case>.in.yaml` files, sorted. */
export function listCases(folder: string): string[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.in.yaml'))
    .map((file) => file.slice(0, -'.in.yaml'.length))
    .sort();
}

/** Fills a model through its own writers, as the reconcilers do; the `ProxyNode` document names the proxy. */
export function loadCase(folder: string, file: string): GeneratorCase {
  return buildCase(
    parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((document) => document.toJS() as CaseObject),
    file,
  );
}

/** A case document: a Kubernetes object, or the `ProxyNode` naming the proxy. */
export type CaseObject = KubeObject & { id?: string; metadata?: Record<string, JsonValue>; routeNames?: string[] };

/** `loadCase` over objects already parsed (`label` names them in errors). */
export function buildCase(objects: readonly CaseObject[], label: string): GeneratorCase {
  const model = newMeshModel({ domain: TEST_DOMAIN, clusterId: CLUSTER_ID, useEndpointSlices: false });
  let proxy: Proxy | undefined;
  let routeNames: string[] = [];
  for (const object of objects) {
    switch (object.kind) {
      case 'ProxyNode':
        proxy = parseProxy({ id: object.id ?? '', metadata: jsonToStruct((object.metadata ?? {}) as Record<string, JsonValue>) });
        routeNames = object.routeNames ?? [];
        break;
      case 'Service':
        model.registry.applyService(serviceFromObject(object, TEST_DOMAIN) ?? fail(`bad Service in ${label}`));
        break;
      case 'Pod':
        model.registry.applyWorkload(workloadFromPod(object, CLUSTER_ID) ?? fail(`bad Pod in ${label}`));
        break;
      default: {
        const result = validateResource(object);
        if (result.errors.length > 0) fail(`invalid ${object.kind} in ${label}: ${JSON.stringify(result.errors)}`);
        model.configStore.apply(result.resource as TypedResource);
      }
    }
  }
  return { model, proxy: proxy ?? fail(`${label} has no ProxyNode`), routeNames };
}

function fail(message: string): never {
  throw new Error(message);
}

/** `value`, or a failure naming what was missing. */
export function required<T>(value: T | undefined, what: string): T {
  return value ?? fail(`missing ${what}`);
}

/** Every string value under `key` anywhere in a message (route names, cluster names), for consistency checks. */
export function valuesOf(value: unknown, key: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) valuesOf(item, key, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && typeof v === 'string') out.add(v);
      else valuesOf(v, key, out);
    }
  }
  return out;
}
