// `meshctl validate`, a documented sub-package: the offline command imports it alone, not
// meshctl/index.ts, whose other commands bring gRPC, protobufjs and the injector's templates.
export { validateFiles, type ValidateOutput } from './validate-files.js';
