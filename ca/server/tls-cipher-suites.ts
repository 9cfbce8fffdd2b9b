import { ServerCredentials } from '@grpc/grpc-js';
import type { SecureServerOptions } from 'node:http2';
import type { SecureContextOptions } from 'node:tls';
import { UsageError } from '../../runtime/index.js';

/**
 * `--tls-cipher-suites` names (IANA, as the seed lists them) and their OpenSSL names. As in the
 * reference, the list governs TLS 1.2 and below; TLS 1.3 keeps its own suites.
 */
const OPENSSL_NAMES: Readonly<Record<string, string>> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
};

/** The OpenSSL cipher list for the seed's names; TLS 1.3 suites are kept by OpenSSL either way. */
export function openSslCipherList(names: readonly string[]): string {
  return names
    .map((name) => {
      const openssl = OPENSSL_NAMES[name];
      if (!openssl) throw new UsageError(`unknown cipher suite "${name}" in --tls-cipher-suites`);
      return openssl;
    })
    .join(':');
}

type Watcher = (context: SecureContextOptions | null) => void;

/**
 * Server credentials that restrict the TLS 1.2 cipher suites of any other server credentials,
 * including ones whose certificates rotate (certificate providers): every secure context they
 * hand to the server carries the cipher list.
 */
class CipherSuiteServerCredentials extends ServerCredentials {
  private readonly wrapped = new Map<Watcher, Watcher>();

  constructor(
    private readonly inner: ServerCredentials,
    private readonly ciphers: string,
  ) {
    super({ ...inner._getConstructorOptions(), ciphers });
  }

  override _addWatcher(watcher: Watcher): void {
    const withCiphers: Watcher = (context) => watcher(context && { ...context, ciphers: this.ciphers });
    this.wrapped.set(watcher, withCiphers);
    this.inner._addWatcher(withCiphers);
  }

  override _removeWatcher(watcher: Watcher): void {
    const withCiphers = this.wrapped.get(watcher);
    if (withCiphers) this.inner._removeWatcher(withCiphers);
    this.wrapped.delete(watcher);
  }

  override _isSecure(): boolean {
    return true;
  }

  override _getSecureContextOptions(): SecureContextOptions | null {
    const options = this.inner._getSecureContextOptions();
    return options && { ...options, ciphers: this.ciphers };
  }

  override _getConstructorOptions(): SecureServerOptions | null {
    return { ...this.inner._getConstructorOptions(), ciphers: this.ciphers };
  }

  override _getInterceptors(): ReturnType<ServerCredentials['_getInterceptors']> {
    return this.inner._getInterceptors();
  }

  override _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}

/** `credentials` limited to `--tls-cipher-suites`; unchanged when the list is empty. */
export function withCipherSuites(credentials: ServerCredentials, names: readonly string[]): ServerCredentials {
  if (names.length === 0) return credentials;
  return new CipherSuiteServerCredentials(credentials, openSslCipherList(names));
}
