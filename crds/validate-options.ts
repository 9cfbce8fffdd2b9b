/** What a caller may tell the validator about the cluster, for checks that need more than the resource. */
export type ValidateOptions = {
  /**
   * The container ports of the services that select workloads with these labels in this namespace,
   * or undefined when unknown. With it, `portLevelMtls` entries on ports no service binds are flagged.
   */
  servicePortsForWorkload?: (namespace: string | undefined, selector: Readonly<Record<string, string>>) => readonly number[] | undefined;
};
