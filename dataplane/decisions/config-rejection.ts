import { errorMessage, MeshError } from '../../runtime/index.js';

/** Configuration the data plane cannot implement: the NACK names the resource and the field. */
export class ConfigRejection extends MeshError<'config-rejected'> {
  constructor(
    readonly resource: string,
    readonly field: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('config-rejected', `${resource}: ${field}: ${message}`, options);
  }
}

/** Runs a compile step, turning any error into a rejection that names where it happened. */
export function compiling<T>(resource: string, field: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (error instanceof ConfigRejection) throw error;
    throw new ConfigRejection(resource, field, errorMessage(error), { cause: error });
  }
}
