/** A length-delimited protobuf field written by hand: the wire form an attacker controls. */
export function lengthDelimitedField(number: number, body: Buffer): Buffer {
  const length: number[] = [];
  let value = body.length;
  while (value >= 0x80) {
    length.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  length.push(value);
  return Buffer.concat([Buffer.from([(number << 3) | 2, ...length]), body]);
}
