import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/**
 * A pod's HTTP server for tests of forwarding paths (port-forward, the pod proxy): it answers each
 * request with its method, URL, body size and SHA-256 (so a large body's framing is checked end to
 * end) and the Authorization header it received, with an `X-Echo: yes` header.
 */
export function startHashingEchoServer(host: string): Promise<Server> {
  const server = createServer((req, res) => {
    const hash = createHash('sha256');
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      hash.update(chunk);
    });
    req.on('end', () => {
      const body = JSON.stringify({ method: req.method, url: req.url, size, sha256: hash.digest('hex'), authorization: req.headers.authorization ?? null });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Echo': 'yes' });
      res.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, host, () => resolve(server)));
}
