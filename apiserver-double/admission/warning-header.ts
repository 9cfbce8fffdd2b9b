/**
 * A `Warning` header value as kube-apiserver writes it (RFC 7234 code 299, no agent): the text
 * quoted with `"` and `\` escaped, control characters blanked, and the UTF-8 bytes sent as they
 * are (Node takes header strings as latin1).
 */
export function warningHeaderValue(text: string): string {
  const printable = [...text].map((c) => (isControl(c) ? ' ' : c)).join('');
  const quoted = `"${printable.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return Buffer.from(`299 - ${quoted}`, 'utf8').toString('latin1');
}

function isControl(character: string): boolean {
  const code = character.codePointAt(0) ?? 0;
  return (code < 0x20 && character !== '\t') || code === 0x7f;
}
