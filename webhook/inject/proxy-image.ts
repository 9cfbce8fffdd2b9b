import type { ProxyConfig } from '../../crds/index.js';
import { isPlainObject } from '../../kube-patch/index.js';
import { ANNOTATIONS } from '../../names/index.js';
import type { JsonObject } from './pod.js';

/** The image types published beside the plain image, as a tag suffix (`1.2-distroless`). */
const KNOWN_IMAGE_TYPES = ['distroless', 'debug'] as const;

function fieldAt(parent: Readonly<JsonObject>, field: string): Readonly<JsonObject> {
  const value = parent[field];
  return isPlainObject(value) ? value : {};
}

/** The tag for an image type, as the reference builds it: a known type suffix replaced, none for `default`, the tag alone for none. */
function taggedWith(tag: string, imageType: string): string {
  if (imageType === '') return tag;
  const known = KNOWN_IMAGE_TYPES.find((type) => tag.endsWith(`-${type}`));
  const plain = known === undefined ? tag : tag.slice(0, -(known.length + 1));
  return imageType === 'default' ? plain : `${plain}-${imageType}`;
}

/**
 * The proxy image of the injector's values: `<hub>/<image>:<tag>[-<imageType>]`, or the image as
 * written when it names a registry (has a `/`). `image` replaces the values' `global.proxy.image`.
 */
export function valuesProxyImage(values: Readonly<JsonObject>, imageType = '', image?: string): string {
  const global = fieldAt(values, 'global');
  const name = String(image ?? fieldAt(global, 'proxy')['image'] ?? 'proxyv2');
  if (name.includes('/')) return name;
  return `${String(global['hub'] ?? '')}/${name}:${taggedWith(String(global['tag'] ?? ''), imageType)}`;
}

/** The image type of a pod's proxy: `sidecar.mesh.io/proxyImageType`, else the proxy config's `image.imageType`, else the values' `global.variant`. */
export function proxyImageType(annotations: Readonly<Record<string, string>>, proxyConfig: ProxyConfig, values: Readonly<JsonObject>): string {
  const fromAnnotation = annotations[ANNOTATIONS.proxyImageType];
  if (fromAnnotation !== undefined) return fromAnnotation;
  const configured = isPlainObject(proxyConfig.image) ? proxyConfig.image['imageType'] : undefined;
  if (typeof configured === 'string' && configured !== '') return configured;
  const variant = fieldAt(values, 'global')['variant'];
  return typeof variant === 'string' ? variant : '';
}
