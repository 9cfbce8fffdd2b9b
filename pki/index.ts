// X.509 helpers shared by the certificate authority and the data plane: whether a peer's chain
// leads to a trusted root. No dependency on any other package of ours.
export { chainProblem, type ChainInput } from './verify-chain.js';
export { decodeCertificates, decodePemBlocks, encodePem, type PemBlock } from './pem.js';
