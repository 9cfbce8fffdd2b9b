/** An `Any` as it travels: the type URL and the encoded message. */
export interface EncodedAny {
  type_url: string;
  value: Uint8Array;
}
