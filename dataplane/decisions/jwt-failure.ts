/** Why a token was refused, as Envoy's status names it. */
export type JwtFailure =
  | 'missing'
  | 'expired'
  | 'not-yet-valid'
  | 'audience-not-allowed'
  | 'unknown-issuer'
  | 'no-matching-key'
  | 'verification-failed'
  | 'malformed'
  | 'jwks-fetch-failed';
