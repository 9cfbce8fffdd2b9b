import type { Server } from '@grpc/grpc-js';

/** Stops a gRPC server gracefully, cutting the calls still open once `timeoutMs` has passed. */
export function shutdownGrpcServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, timeoutMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
