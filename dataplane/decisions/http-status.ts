/**
 * `envoy.type.v3.StatusCode`: decoded from xDS an `HttpStatus.code` arrives by its enum name
 * (`ServiceUnavailable`), written by hand as the number. Names and numbers as in
 * envoy/type/v3/http_status.proto.
 */
const STATUS_CODES: Readonly<Record<string, number>> = {
  Continue: 100,
  OK: 200,
  Created: 201,
  Accepted: 202,
  NonAuthoritativeInformation: 203,
  NoContent: 204,
  ResetContent: 205,
  PartialContent: 206,
  MultiStatus: 207,
  AlreadyReported: 208,
  IMUsed: 226,
  MultipleChoices: 300,
  MovedPermanently: 301,
  Found: 302,
  SeeOther: 303,
  NotModified: 304,
  UseProxy: 305,
  TemporaryRedirect: 307,
  PermanentRedirect: 308,
  BadRequest: 400,
  Unauthorized: 401,
  PaymentRequired: 402,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  ProxyAuthenticationRequired: 407,
  RequestTimeout: 408,
  Conflict: 409,
  Gone: 410,
  LengthRequired: 411,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  URITooLong: 414,
  UnsupportedMediaType: 415,
  RangeNotSatisfiable: 416,
  ExpectationFailed: 417,
  MisdirectedRequest: 421,
  UnprocessableEntity: 422,
  Locked: 423,
  FailedDependency: 424,
  UpgradeRequired: 426,
  PreconditionRequired: 428,
  TooManyRequests: 429,
  RequestHeaderFieldsTooLarge: 431,
  InternalServerError: 500,
  NotImplemented: 501,
  BadGateway: 502,
  ServiceUnavailable: 503,
  GatewayTimeout: 504,
  HTTPVersionNotSupported: 505,
  VariantAlsoNegotiates: 506,
  InsufficientStorage: 507,
  LoopDetected: 508,
  NotExtended: 510,
  NetworkAuthenticationRequired: 511,
};
const KNOWN_CODES: ReadonlySet<number> = new Set(Object.values(STATUS_CODES));

/** The number of a StatusCode given by name or number; undefined for `Empty` (0), unset, or a code outside the enum. */
export function httpStatusCode(code: unknown): number | undefined {
  if (typeof code === 'string') return STATUS_CODES[code] ?? (/^\d+$/.test(code) && KNOWN_CODES.has(Number(code)) ? Number(code) : undefined);
  if (typeof code === 'number') return KNOWN_CODES.has(code) ? code : undefined;
  return undefined;
}
