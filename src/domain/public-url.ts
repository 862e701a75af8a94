/**
 * The effective public URL: the base of every link the daemon writes (problem `type`, the
 * OpenAPI `servers` entry, tracking and unsubscribe links in mail) and the host the link-host
 * CNAMEs point at. An explicit `publicUrl` is used as configured. Without one it is
 * `http://<http.host>:<port the HTTP API bound>`, so POSTRIDER_HTTP_PORT (or port 0) moves the
 * links with the listener. A wildcard http.host (0.0.0.0, ::) is no address a reader can use:
 * the listener is meant to be reached from elsewhere, by name, so `hostname` takes its place.
 *
 * The config stays frozen; the port is known only once the listener bound, so the value is read
 * at use time through boundPort().
 */
export interface PublicUrlOptions {
  /** config.publicUrl: empty when not set explicitly. */
  configured: string;
  http: { readonly host: string; readonly port: number };
  hostname: string;
  /** The port the HTTP API listens on, 0 while it does not (http.port is used then). */
  boundPort: () => number;
}

const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]', '::0']);

/** A bind address that means every interface (or none given): no address a client can use. */
export function isWildcardHost(host: string): boolean {
  return WILDCARDS.has(host.trim());
}

export class PublicUrl {
  constructor(private readonly o: PublicUrlOptions) {}

  /** True when publicUrl was set in the config file or POSTRIDER_PUBLIC_URL. */
  get explicit(): boolean {
    return this.o.configured !== '';
  }

  /** The base URL without trailing slash. */
  get value(): string {
    if (this.explicit) return this.o.configured;
    return derivedPublicUrl(this.o.http.host, this.o.boundPort() || this.o.http.port, this.o.hostname);
  }
}

/** `http://<host>:<port>` as a URL origin (IPv6 literals bracketed, port 80 left out). */
export function derivedPublicUrl(httpHost: string, port: number, hostname: string): string {
  const host = isWildcardHost(httpHost) ? hostname : httpHost.trim();
  const literal = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return new URL(`http://${literal}:${port}`).origin;
}
