/**
 * A proxyless gRPC server application for tests: serves `ECHO_SERVICE` (Echo and Admin) on an
 * `XdsServer` bound to the address in argv[2], with the xDS server credentials, so its TLS and
 * authorization come from the mesh. @grpc/grpc-js-xds reads its bootstrap from the file the
 * agent wrote (GRPC_XDS_BOOTSTRAP). Each answer names the caller's URI SAN, or `plaintext`.
 * Prints `serving <address>` once the listener is bound; stops on SIGTERM.
 */
import { ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { register, XdsServer, XdsServerCredentials } from '@grpc/grpc-js-xds';
import { ECHO_SERVICE } from './echo-service.js';

function peerIdentity(call: ServerUnaryCall<Buffer, Buffer>): string {
  const certificate = call.getAuthContext().sslPeerCertificate;
  const uri = certificate?.subjectaltname?.split(', ').find((entry) => entry.startsWith('URI:'));
  return uri ? uri.slice('URI:'.length) : 'plaintext';
}

const answer =
  (method: string) =>
  (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>): void =>
    done(null, Buffer.from(`${method}:${call.request.toString()} from ${peerIdentity(call)}`));

const address = process.argv[2];
if (!address) {
  process.stderr.write('usage: proxyless-echo-server <ip:port>\n');
  process.exit(2);
}
register();
const server = new XdsServer();
server.addService(ECHO_SERVICE, { Echo: answer('echo'), Admin: answer('admin') });
server.bindAsync(address, new XdsServerCredentials(ServerCredentials.createInsecure()), (error) => {
  if (error) {
    process.stderr.write(`cannot serve on ${address}: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`serving ${address}\n`);
});
process.once('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
