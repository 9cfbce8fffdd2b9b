import { createServer, type Server } from 'node:http';

/** The seed's sample backend: `GET /ip` (the caller's address), `GET /headers` (the request headers it received) and `/status/<code>` (that code). */
export interface SampleBackend {
  readonly server: Server;
  close(): Promise<void>;
}

function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
}

export async function startSampleBackend(host: string, ports: readonly number[]): Promise<SampleBackend[]> {
  const started: SampleBackend[] = [];
  for (const port of ports) {
    // As large headers as the sidecar lets through (60 KiB): the app is not what limits them.
    const server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const reply = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(`${JSON.stringify(body, null, 2)}\n`);
      };
      if (path === '/ip') return reply(200, { origin: req.socket.remoteAddress });
      const status = /^\/status\/([1-5]\d\d)$/.exec(path ?? '')?.[1];
      if (status) return reply(Number(status), { status: Number(status) });
      if (path === '/headers') {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers))
          if (value !== undefined) headers[headerCase(name)] = Array.isArray(value) ? value.join(',') : value;
        return reply(200, { headers });
      }
      return reply(404, { error: 'not found', url: req.url });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    started.push({
      server,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    });
  }
  return started;
}
