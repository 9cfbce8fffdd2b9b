import { MeshError } from '../../runtime/index.js';

/** The codes of the injector's failures (the `webhook` group of the error catalogue). */
export type InjectionErrorCode =
  'invalid-injector-config' | 'invalid-injection-annotation' | 'injection-template-not-found' | 'injection-template-failed' | 'invalid-injection-input';

/** Why a pod could not be injected, or the injector configured; the webhook denies with the message. */
export class InjectionError extends MeshError<InjectionErrorCode> {}
