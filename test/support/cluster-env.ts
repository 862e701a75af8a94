/**
 * The environment every node of a cluster test starts with: one schema of the test's PostgreSQL,
 * the test's DNS, delivery to the sink MX's port on loopback, and retries within the test.
 */
export function clusterNodeEnv(o: { pgUrl: string; schema: string; dnsAddress: string; sinkPort: number }): Record<string, string> {
  return {
    POSTRIDER_STORE_POSTGRES_URL: o.pgUrl,
    POSTRIDER_STORE_POSTGRES_SCHEMA: o.schema,
    POSTRIDER_DNS_SERVERS: o.dnsAddress,
    POSTRIDER_DELIVERY_ENABLED: 'true',
    POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
    POSTRIDER_DELIVERY_PORT: String(o.sinkPort),
    // A delivery cut short (a fault, a slow start) is retried within the test, not in 5 minutes.
    POSTRIDER_DELIVERY_RETRY_SCHEDULE: '1s*',
  };
}
