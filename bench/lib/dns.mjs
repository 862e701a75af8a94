/**
 * A loopback authoritative DNS server (dns2) for benchmarks, the plain-JS sibling of
 * test/support/dns-server.ts: UDP and TCP on the same 127.0.0.1 port (c-ares retries a
 * truncated answer, such as an RSA-2048 DKIM TXT record, over TCP to the same address),
 * NXDOMAIN for unknown names, NODATA for known names without the asked type, TXT values split
 * into 255-byte character-strings. Benchmarks never touch real DNS.
 */
import net from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;
const TYPE_NAMES = new Map(Object.entries(Packet.TYPE).map(([k, v]) => [v, k]));
const norm = (name) => name.trim().toLowerCase().replace(/\.$/, '');

function txtStrings(value) {
  const bytes = Buffer.from(value, 'utf8');
  const out = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [bytes];
}

function resource(owner, type, value, ttl) {
  const base = { name: owner, class: Packet.CLASS.IN, ttl };
  switch (type) {
    case 'A':
      return new Packet.Resource({ ...base, type: Packet.TYPE.A, address: value });
    case 'CNAME':
      return new Packet.Resource({ ...base, type: Packet.TYPE.CNAME, domain: norm(value) });
    case 'MX': {
      const [priority, exchange] = String(value).trim().split(/\s+/);
      return new Packet.Resource({ ...base, type: Packet.TYPE.MX, priority: Number(priority), exchange });
    }
    case 'TXT':
      return new Packet.Resource({ ...base, type: Packet.TYPE.TXT, data: txtStrings(value) });
    default:
      throw new Error(`bench DNS: unsupported type ${type}`);
  }
}

/** Starts the server; returns { address: '127.0.0.1:PORT', set(name, type, values), close() }. */
export async function startDns() {
  const zone = new Map(); // name -> Map(type -> values[])

  const answer = (request) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const q = request.questions[0];
    if (!q) return response;
    const type = TYPE_NAMES.get(q.type);
    let owner = norm(q.name);
    for (let hop = 0; hop < 8; hop++) {
      const sets = zone.get(owner);
      if (!sets) {
        response.header.rcode = 3; // NXDOMAIN
        return response;
      }
      const values = sets.get(type);
      if (values) {
        response.answers.push(...values.map((v) => resource(owner, type, v, 300)));
        return response;
      }
      const alias = sets.get('CNAME');
      if (!alias) return response; // NODATA
      response.answers.push(resource(owner, 'CNAME', alias[0], 300));
      owner = norm(alias[0]);
    }
    response.header.rcode = 2;
    return response;
  };
  const handle = (request, send) => {
    let response;
    try {
      response = answer(request);
    } catch {
      response = Packet.createResponseFromRequest(request);
      response.header.rcode = 2; // SERVFAIL
    }
    send(response).catch(() => undefined);
  };

  const sockets = new Set();
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = dns2.createUDPServer({ type: 'udp4' });
    udp.on('request', handle);
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = dns2.createTCPServer();
    tcp.on('request', handle);
    tcp.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    const ok = await new Promise((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!ok) {
      await new Promise((r) => udp.close(() => r()));
      continue;
    }
    return {
      address: `127.0.0.1:${port}`,
      set(name, type, values) {
        if (type === 'A' && !values.every((v) => net.isIPv4(v))) throw new Error(`bench DNS: bad A value ${values}`);
        const owner = norm(name);
        if (!zone.has(owner)) zone.set(owner, new Map());
        zone.get(owner).set(type, [...values]);
      },
      async close() {
        for (const s of sockets) s.destroy();
        await Promise.all([new Promise((r) => udp.close(() => r())), new Promise((r) => tcp.close(() => r()))]);
      },
    };
  }
  throw new Error('bench DNS: could not bind UDP and TCP on one port');
}
