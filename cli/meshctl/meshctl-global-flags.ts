/** The global flags of every meshctl command (seed 3). */
export interface MeshctlGlobalFlags {
  context: string;
  meshNamespace: string;
  orchconfig: string;
  namespace: string;
  vklog: number;
}
