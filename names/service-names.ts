/**
 * The names of the mesh's own objects in the cluster, as the charts create them, and how a
 * control plane revision shows in them.
 */

/** The revision an empty `--revision` (or REVISION) stands for, in labels, statuses and names. */
export const DEFAULT_REVISION = 'default';

/** The daemon's Deployment, Service and ServiceAccount, and its pods' `app` label. */
export const DAEMON_NAME = 'meshd';

/** The daemon's container in its Deployment, the one that runs `pilot-discovery discovery`. */
export const DAEMON_CONTAINER = 'discovery';

/** The label selector of the daemon's pods. */
export const DAEMON_POD_SELECTOR = `app=${DAEMON_NAME}`;

/** The ConfigMap of the mesh config in the root namespace. */
export const MESH_CONFIG_MAP_NAME = 'mesh';

/** The ConfigMap of the injector config (templates and values), and the injection webhook configuration. */
export const INJECTOR_CONFIG_MAP_NAME = 'mesh-sidecar-injector';

/** A revision as labels and statuses write it: `default` for the empty one. */
export function revisionLabelValue(revision: string | undefined): string {
  return revision === undefined || revision === '' ? DEFAULT_REVISION : revision;
}

/** A per-revision object's name: `base` for the default revision (empty or `default`), else `base-<revision>`. */
export function revisionedName(base: string, revision: string | undefined): string {
  return revisionLabelValue(revision) === DEFAULT_REVISION ? base : `${base}-${revision}`;
}
