/**
 * What a start of the daemon loads: the modules reachable from dist/daemon.js through static
 * imports (the global setup builds dist/). Three packages are loaded on first use instead, each
 * about 0.3 s of module loading on this machine: juice (CSS inlining, only in worker threads),
 * mailparser and mailauth (received mail, only when inbound is on). With them at start, the
 * import of the daemon took 1.6 s instead of 0.7, and a daemon started under CI's load missed
 * its 20 s start bound (issue 36). A static import of one of them anywhere on the main thread's
 * graph fails here; load it with import() (or createRequire) where it is used.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const LOADED_ON_FIRST_USE = ['juice', 'mailparser', 'mailauth'];

/** Each package imported statically from the graph of `entry`, with the chain of files that leads to it. */
function staticPackages(entry: string): Map<string, string[]> {
  const parent = new Map<string, string | null>([[entry, null]]);
  const queue = [entry];
  const packages = new Map<string, string[]>();
  const chain = (file: string) => {
    const out: string[] = [];
    for (let f: string | null | undefined = file; f; f = parent.get(f)) out.push(path.relative(DIST, f));
    return out;
  };
  while (queue.length > 0) {
    const file = queue.shift()!;
    const source = fs.readFileSync(file, 'utf8');
    // Static import and re-export declarations only; import() expressions are not matched.
    for (const m of source.matchAll(/^(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec);
        if (!parent.has(target)) {
          parent.set(target, file);
          queue.push(target);
        }
      } else if (!spec.startsWith('node:')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (!packages.has(name)) packages.set(name, chain(file));
      }
    }
  }
  return packages;
}

describe('the daemon at start', () => {
  it('loads none of the packages that are loaded on first use', () => {
    const packages = staticPackages(path.join(DIST, 'daemon.js'));
    // The walk sees the graph: packages every start needs are there.
    expect([...packages.keys()]).toEqual(expect.arrayContaining(['fastify', 'lmdb', 'piscina', 'handlebars']));
    const loaded = LOADED_ON_FIRST_USE.filter((name) => packages.has(name)).map((name) => `${name} <= ${packages.get(name)!.join(' <= ')}`);
    expect(loaded).toEqual([]);
  });
});
