/**
 * Test support: a config folder with everything a folder can hold, for comparing the ways it is
 * read (one thread, parse threads): every case of the policy corpus (`crds/testdata/corpus`, valid
 * and invalid, with their exact messages), several to a file and several defining the same object,
 * generated policies in multi-document files, a `List`, a file with a syntax error, documents that
 * are not objects or name nothing, values JSON cannot carry (`.nan`, `.inf`, `-0`), `__proto__`
 * keys, metadata the folder overrides (`uid`, `generation`), server fields (`status`,
 * `managedFields`), objects without a namespace, other kinds (a Service, a ConfigMap) and an empty
 * file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../testing/run-bin.js';

const CORPUS = join(PROJECT_ROOT, 'crds/testdata/corpus');

/** The corpus' policy documents (sidecars left out), by kind folder. */
function corpusDocuments(): Map<string, string[]> {
  const byKind = new Map<string, string[]>();
  for (const kind of readdirSync(CORPUS).sort()) {
    const files = readdirSync(join(CORPUS, kind)).filter((name) => name.endsWith('.yaml') && !name.endsWith('.expected.yaml'));
    byKind.set(
      kind,
      files.sort().map((name) => readFileSync(join(CORPUS, kind, name), 'utf8')),
    );
  }
  return byKind;
}

function generatedPolicy(i: number): string {
  const namespace = `ns-${i % 7}`;
  switch (i % 4) {
    case 0:
      return `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata:\n  name: allow-${i}\n  namespace: ${namespace}\nspec:\n  selector:\n    matchLabels:\n      app: app-${i % 5}\n  action: ALLOW\n  rules:\n    - from:\n        - source:\n            principals: ["cluster.local/ns/${namespace}/sa/client"]\n      to:\n        - operation:\n            methods: ["GET"]\n            paths: ["/api/${i}/*"]\n`;
    case 1:
      // Invalid: an unknown action and a wildcard in a label.
      return `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata:\n  name: bad-${i}\n  namespace: ${namespace}\nspec:\n  selector:\n    matchLabels:\n      app: "app-*"\n  action: MAYBE\n`;
    case 2:
      return `apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata:\n  name: mtls-${i}\n  namespace: ${namespace}\nspec:\n  selector:\n    matchLabels:\n      app: app-${i % 5}\n  mtls:\n    mode: STRICT\n  portLevelMtls:\n    "8080":\n      mode: PERMISSIVE\n    "9090":\n      mode: DISABLE\n`;
    default:
      return `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata:\n  name: jwt-${i}\n${i % 3 === 0 ? '' : `  namespace: ${namespace}\n`}spec:\n  jwtRules:\n    - issuer: https://issuer-${i % 3}.example.com\n      jwksUri: https://issuer-${i % 3}.example.com/jwks.json\n`;
  }
}

const ODD_DOCUMENTS = [
  // Values JSON cannot carry, in a mesh kind (rejected) and in a ConfigMap (served as is).
  'apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata:\n  name: odd-numbers\n  namespace: ns-1\nspec:\n  host: a.ns-1.svc.cluster.local\n  trafficPolicy:\n    connectionPool:\n      tcp:\n        maxConnections: .inf\n    outlierDetection:\n      consecutive5xxErrors: .nan\n      maxEjectionPercent: -0\n',
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd-values\n  namespace: ns-1\ndata:\n  a: "1"\nextra:\n  nan: .nan\n  inf: -.inf\n  zero: -0\n',
  // Metadata the folder overrides, and fields the server owns.
  'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata:\n  name: overridden\n  namespace: ns-2\n  uid: 5\n  generation: "x"\n  resourceVersion: 7\n  creationTimestamp: 12\n  managedFields:\n    - manager: kubectl\nspec:\n  mtls:\n    mode: STRICT\nstatus:\n  conditions: [{ type: Ready }]\n',
  // A `__proto__` key: data, never a prototype (a rejected policy, a served ConfigMap).
  'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata:\n  name: proto\n  namespace: ns-2\n  __proto__: { namespace: evil }\nspec: {}\n',
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proto\n  __proto__: { labels: { a: b } }\ndata:\n  __proto__: x\n',
  // No namespace: `default`.
  'apiVersion: networking.mesh.io/v1alpha3\nkind: Gateway\nmetadata:\n  name: no-namespace\nspec:\n  selector:\n    app: ingress\n  servers:\n    - port: { number: 80, name: http, protocol: HTTP }\n      hosts: ["*"]\n',
  // Not a policy: served to other reconcilers, never validated as one.
  'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ns-1\nspec:\n  selector: { app: web }\n  ports: [{ name: http, port: 80, targetPort: 8080 }]\n',
  // Not objects, or naming nothing: reported, the file's other documents served.
  '- a list\n- at the top\n',
  'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata:\n  namespace: ns-3\nspec: {}\n',
];

const LIST = `apiVersion: v1
kind: List
items:
  - apiVersion: security.mesh.io/v1beta1
    kind: PeerAuthentication
    metadata: { name: from-list, namespace: ns-4 }
    spec: { mtls: { mode: PERMISSIVE } }
  - apiVersion: security.mesh.io/v1beta1
    kind: AuthorizationPolicy
    metadata: { name: from-list, namespace: ns-4 }
    spec: { action: DENY, rules: [{ from: [{ source: { notNamespaces: [ns-5] } }] }] }
`;

/** Writes the folder under `root` (which must exist and be empty). `copies` repeats the generated policies to make it larger. */
export async function writeMixedConfigFolder(root: string, copies = 1): Promise<void> {
  const put = async (path: string, text: string): Promise<void> => {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  };
  for (const [kind, documents] of corpusDocuments()) {
    // Each case alone, then all of them in one file: the second definitions lose (conflicts).
    for (const [i, text] of documents.entries()) await put(`corpus/${kind}/case-${String(i).padStart(3, '0')}.yaml`, text);
    await put(`corpus-all/${kind}.yaml`, documents.join('\n---\n'));
  }
  for (let copy = 0; copy < copies; copy++) {
    for (let file = 0; file < 4; file++) {
      const documents = Array.from({ length: 25 }, (_, j) => generatedPolicy(copy * 100 + file * 25 + j));
      await put(`generated/copy-${copy}/policies-${file}.yaml`, documents.join('---\n'));
    }
  }
  await put('odd/documents.yaml', ODD_DOCUMENTS.join('---\n'));
  await put('odd/list.yaml', LIST);
  await put('odd/broken.yaml', `${generatedPolicy(0)}---\nkind: [unclosed\n`);
  await put('odd/empty.yaml', '');
  await put(
    'odd/policy.json',
    JSON.stringify({
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'PeerAuthentication',
      metadata: { name: 'json', namespace: 'ns-6' },
      spec: { mtls: { mode: 'STRICT' } },
    }),
  );
}
