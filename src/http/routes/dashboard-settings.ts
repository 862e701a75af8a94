/**
 * GET /dashboard/settings: what the dashboard's API keys page shows to copy into a mail client
 * (docs/dashboard.md): the SMTP submission host, ports and TLS. Authenticated like the API (any
 * key or the session cookie); the answer is the daemon's, the same for every account, and holds
 * nothing of one. Hidden from OpenAPI like the dashboard's other routes: it is for the web app.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/schema.js';
import { isWildcardHost } from '../../domain/public-url.js';
import type { DashboardSettings } from '../../domain/wire.js';
import type { HttpContext } from '../server.js';

export interface SettingsSource {
  smtp: Pick<Config['smtp'], 'enabled' | 'host' | 'port' | 'implicitTlsPort' | 'tlsCert'>;
  /** The ports the listener bound (they differ from the config's when it says 0); null while it does not listen. */
  boundSmtp: () => { port: number; implicitTlsPort: number } | null;
}

function isLoopback(host: string): boolean {
  return /^127\./.test(host) || host === '::1' || host === '[::1]' || host.toLowerCase() === 'localhost';
}

/**
 * The host a client should connect to. Bound to loopback, only local programs can, at that
 * address. Otherwise the daemon's name: `hostname` when it is a dotted name, else publicUrl's
 * host when that is one, else the bind address (a wildcard bind falls back to `hostname`).
 */
export function smtpClientHost(o: { bind: string; hostname: string; publicUrl: string }): { host: string; localOnly: boolean } {
  const bind = o.bind.trim();
  if (isLoopback(bind)) return { host: bind, localOnly: true };
  if (o.hostname.includes('.')) return { host: o.hostname, localOnly: false };
  const urlHost = URL.canParse(o.publicUrl) ? new URL(o.publicUrl).hostname : '';
  if (urlHost.includes('.') && !isLoopback(urlHost) && !/^[\d.]+$/.test(urlHost)) return { host: urlHost, localOnly: false };
  return { host: isWildcardHost(bind) ? o.hostname : bind, localOnly: false };
}

export const dashboardSettingsRoutes =
  (source: SettingsSource) =>
  (app: FastifyInstance, { config, publicUrl }: HttpContext): void => {
    app.get('/dashboard/settings', { schema: { hide: true } }, async (_req, reply): Promise<DashboardSettings> => {
      const { smtp } = source;
      const bound = source.boundSmtp();
      const where = smtpClientHost({ bind: smtp.host, hostname: config.hostname, publicUrl: publicUrl?.value ?? config.publicUrl });
      reply.header('cache-control', 'no-store');
      return {
        smtp: {
          enabled: smtp.enabled,
          ...where,
          port: bound?.port || smtp.port,
          implicitTlsPort: bound ? bound.implicitTlsPort : smtp.implicitTlsPort,
          selfSignedCertificate: !smtp.tlsCert,
        },
      };
    });
  };
