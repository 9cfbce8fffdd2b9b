import type { EncodedAny } from './encoded-any.js';

/**
 * Protobuf wire encoding of (Delta)DiscoveryResponse messages whose resources are already-encoded
 * `Any`s, without rebuilding message objects: the resources' bytes are copied once into the
 * frame. Responses with fields outside this set return undefined and go through protobufjs.
 */

const LENGTH_DELIMITED = 2;

function tag(field: number, wireType: number): number {
  return (field << 3) | wireType;
}

class Frame {
  private readonly parts: (Buffer | Uint8Array)[] = [];
  private scratch: number[] = [];
  length = 0;

  private flush(): void {
    if (this.scratch.length === 0) return;
    this.parts.push(Buffer.from(this.scratch));
    this.scratch = [];
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.scratch.push((value % 128) | 0x80);
      value = Math.floor(value / 128);
      this.length++;
    }
    this.scratch.push(value);
    this.length++;
  }

  bytes(data: Uint8Array): void {
    this.flush();
    this.parts.push(data);
    this.length += data.length;
  }

  /** A length-delimited field whose body is `body`. */
  field(field: number, body: Uint8Array): void {
    this.varint(tag(field, LENGTH_DELIMITED));
    this.varint(body.length);
    if (body.length > 0) this.bytes(body);
  }

  string(field: number, value: string | undefined): void {
    if (value === undefined || value === '') return;
    this.field(field, Buffer.from(value, 'utf8'));
  }

  finish(): Buffer {
    this.flush();
    return Buffer.concat(this.parts, this.length);
  }

  /** The frame written into `output` (at least `length` long), returned as a view of it. */
  finishInto(output: Buffer): Buffer {
    this.flush();
    let offset = 0;
    for (const part of this.parts) {
      output.set(part, offset);
      offset += part.length;
    }
    return output.subarray(0, offset);
  }
}

/** Responses up to this size are written into one buffer reused from response to response. */
const REUSED_OUTPUT_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The buffer a response is written into. grpc-js copies a serialized message into its own frame
 * before `serialize` returns, so the bytes are dead by the next response: reusing one buffer
 * saves allocating (and collecting) a fresh one per response, megabytes for a full push.
 */
class OutputBuffer {
  private buffer = Buffer.alloc(0);

  write(frame: Frame): Buffer {
    if (frame.length > REUSED_OUTPUT_MAX_BYTES) return frame.finish();
    if (frame.length > this.buffer.length) this.buffer = Buffer.allocUnsafe(Math.min(REUSED_OUTPUT_MAX_BYTES, Math.max(frame.length, 2 * this.buffer.length)));
    return frame.finishInto(this.buffer);
  }
}

function anyBody(any: EncodedAny): Buffer {
  const frame = new Frame();
  frame.string(1, any.type_url);
  frame.field(2, any.value);
  return frame.finish();
}

function isEncodedAny(value: unknown): value is EncodedAny {
  return typeof value === 'object' && value !== null && typeof (value as EncodedAny).type_url === 'string' && (value as EncodedAny).value instanceof Uint8Array;
}

function controlPlaneBody(value: unknown): Buffer | undefined {
  if (value === undefined) return Buffer.alloc(0);
  const identifier = (value as { identifier?: unknown }).identifier;
  if (typeof identifier !== 'string' || Object.keys(value as object).length !== 1) return undefined;
  const frame = new Frame();
  frame.string(1, identifier);
  return frame.finish();
}

const SOTW_FIELDS = new Set(['version_info', 'resources', 'type_url', 'nonce', 'control_plane']);
const DELTA_FIELDS = new Set(['system_version_info', 'resources', 'type_url', 'removed_resources', 'nonce', 'control_plane']);
const DELTA_RESOURCE_FIELDS = new Set(['name', 'version', 'resource']);

/**
 * Encodes the `Any` bytes of a resource once per object; the cached encodings are shared by
 * every response that sends the same encoded resource. A response's bytes are valid until the
 * next response is encoded (the serializer of a grpc-js server, which copies them at once).
 */
export function newDiscoveryResponseEncoder(): {
  sotw(message: Record<string, unknown>): Buffer | undefined;
  delta(message: Record<string, unknown>): Buffer | undefined;
} {
  // The resource as field 2 (its tag, length and `Any` body), which it is in both responses and in
  // a delta Resource: a response is then the cached pieces and a few bytes of its own.
  const asFieldTwo = new WeakMap<EncodedAny, Buffer>();
  const fieldTwoOf = (any: EncodedAny): Buffer => {
    let encoded = asFieldTwo.get(any);
    if (!encoded) {
      const frame = new Frame();
      frame.field(2, anyBody(any));
      encoded = frame.finish();
      asFieldTwo.set(any, encoded);
    }
    return encoded;
  };
  // A delta Resource (version, the resource as field 2, name) as field 2 of the response, encoded
  // once per encoded resource: its name and version are those of every response that sends it
  // (the version is the digest of its bytes; another name re-encodes it).
  const deltaResourceFields = new WeakMap<EncodedAny, { name: string; version: string; field: Buffer }>();
  const resourceFieldOf = (any: EncodedAny, name: string, version: string): Buffer => {
    const cached = deltaResourceFields.get(any);
    if (cached && cached.name === name && cached.version === version) return cached.field;
    const inner = new Frame();
    inner.string(1, version);
    inner.bytes(fieldTwoOf(any));
    inner.string(3, name);
    const frame = new Frame();
    frame.field(2, inner.finish());
    const field = frame.finish();
    deltaResourceFields.set(any, { name, version, field });
    return field;
  };
  const writeSotw = (frame: Frame, resources: unknown[]): boolean => {
    if (!resources.every(isEncodedAny)) return false;
    for (const resource of resources) frame.bytes(fieldTwoOf(resource));
    return true;
  };
  const writeDelta = (frame: Frame, resources: unknown[]): boolean => {
    for (const resource of resources as Record<string, unknown>[]) {
      const { name, version } = resource;
      for (const key in resource) if (!DELTA_RESOURCE_FIELDS.has(key)) return false;
      if (!isEncodedAny(resource['resource'])) return false;
      if ((name !== undefined && typeof name !== 'string') || (version !== undefined && typeof version !== 'string')) return false;
      frame.bytes(resourceFieldOf(resource['resource'], name ?? '', version ?? ''));
    }
    return true;
  };
  // A frozen list (what the responses sharing one list carry) is written once and its bytes copied
  // whole into each response that carries it. Its `Any`s are taken as immutable, as `fieldTwoOf`
  // takes them; a delta list is kept only when its Resource objects are frozen too.
  const frozenLists = new WeakMap<unknown[], Buffer>();
  const writeResources = (
    frame: Frame,
    resources: unknown[],
    write: (frame: Frame, resources: unknown[]) => boolean,
    immutable: (resource: unknown) => boolean,
  ): boolean => {
    if (!Object.isFrozen(resources)) return write(frame, resources);
    let fields = frozenLists.get(resources);
    if (!fields) {
      const own = new Frame();
      if (!write(own, resources)) return false;
      fields = own.finish();
      if (resources.every(immutable)) frozenLists.set(resources, fields);
    }
    frame.bytes(fields);
    return true;
  };
  const output = new OutputBuffer();
  return {
    sotw(message) {
      if (!Object.keys(message).every((key) => SOTW_FIELDS.has(key))) return undefined;
      const resources = message['resources'];
      if (!Array.isArray(resources)) return undefined;
      const controlPlane = controlPlaneBody(message['control_plane']);
      if (!controlPlane) return undefined;
      const frame = new Frame();
      frame.string(1, message['version_info'] as string | undefined);
      if (!writeResources(frame, resources, writeSotw, () => true)) return undefined;
      frame.string(4, message['type_url'] as string | undefined);
      frame.string(5, message['nonce'] as string | undefined);
      if (message['control_plane'] !== undefined) frame.field(6, controlPlane);
      return output.write(frame);
    },
    delta(message) {
      if (!Object.keys(message).every((key) => DELTA_FIELDS.has(key))) return undefined;
      const resources = message['resources'];
      if (!Array.isArray(resources)) return undefined;
      const controlPlane = controlPlaneBody(message['control_plane']);
      if (!controlPlane) return undefined;
      const frame = new Frame();
      frame.string(1, message['system_version_info'] as string | undefined);
      if (!writeResources(frame, resources, writeDelta, Object.isFrozen)) return undefined;
      frame.string(4, message['type_url'] as string | undefined);
      frame.string(5, message['nonce'] as string | undefined);
      const removed = message['removed_resources'];
      if (Array.isArray(removed)) for (const name of removed) frame.string(6, String(name));
      if (message['control_plane'] !== undefined) frame.field(7, controlPlane);
      return output.write(frame);
    },
  };
}
