import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { ADS_SERVICE, type EnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { waitFor } from '../../testing/wait-for.js';

/** An ADS server on loopback that records every request and writes only what a test tells it. */
export interface ScriptedAdsServer<Request> {
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: Request[];
  /** Writes a response with `nonce` on the open stream; resolves with the request that answers it (the ACK or NACK). */
  respond(response: { readonly nonce: string } & Record<string, unknown>): Promise<Request>;
  close(): void;
}

/** Starts one, serving the state-of-the-world stream or the delta one. */
export async function startScriptedAdsServer<Request extends { response_nonce: string }>(
  protos: EnvoyProtos,
  method: 'StreamAggregatedResources' | 'DeltaAggregatedResources',
): Promise<ScriptedAdsServer<Request>> {
  const requests: Request[] = [];
  let call: ServerDuplexStream<Request, object> | undefined;
  const server = new Server();
  server.addService(protos.serviceDefinition(ADS_SERVICE), {
    [method]: (stream: ServerDuplexStream<Request, object>) => {
      call = stream;
      stream.on('data', (request: Request) => requests.push(request));
      stream.on('error', () => undefined);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    port,
    requests,
    respond(response) {
      const seen = requests.length;
      call?.write(response);
      return waitFor(() => requests.slice(seen).find((request) => request.response_nonce === response.nonce), {
        description: `the answer to ${response.nonce}`,
      });
    },
    close: () => server.forceShutdown(),
  };
}
