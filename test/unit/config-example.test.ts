import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderExampleConfig } from '../../src/config/example.js';
import { parseJsonc } from '../../src/config/file.js';
import { configKeys } from '../../src/config/keys.js';
import { loadConfig } from '../../src/config/load.js';

const exampleFile = new URL('../../config/postrider.example.jsonc', import.meta.url);

/** Dotted paths of the leaves of a parsed config file; arrays, scalars and keys whose value is an object (delivery.sites) are leaves. */
function keyPaths(obj: Record<string, unknown>, prefix = ''): string[] {
  const objectKeys = new Set(configKeys().map((k) => k.path));
  return Object.entries(obj).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !objectKeys.has(`${prefix}${k}`)
      ? keyPaths(v as Record<string, unknown>, `${prefix}${k}.`)
      : [`${prefix}${k}`],
  );
}

describe('config/postrider.example.jsonc', () => {
  it('is exactly what `postrider config example` renders from the schema', () => {
    const committed = fs.readFileSync(exampleFile, 'utf8');
    expect(committed).toBe(renderExampleConfig());
  });

  it('documents every key of the schema and no other key', () => {
    const parsed = parseJsonc(renderExampleConfig());
    if (typeof parsed === 'string') throw new Error(`the example is not valid JSON with comments: ${parsed}`);
    const paths = keyPaths(parsed);
    expect(new Set(paths).size).toBe(paths.length);
    expect(new Set(paths)).toEqual(new Set(configKeys().map((k) => k.path)));
  });

  it('names the environment variable and the documentation of every key above it', () => {
    const text = renderExampleConfig();
    for (const key of configKeys()) expect(text).toContain(`// ${key.doc} (${key.env})\n`);
  });

  it('loads to exactly the default configuration', () => {
    // hostname defaults to the machine's name, which the example shows as a neutral placeholder.
    const defaults = loadConfig({ env: {}, overrides: { hostname: 'mail.example.com' } });
    expect(loadConfig({ configPath: exampleFile.pathname, env: {} })).toEqual(defaults);
  });
});

describe('docs/configuration.md', () => {
  it('has a row for every key of the schema, naming its key and its environment variable', () => {
    // README calls it "every setting, its environment variable and default"; 21 keys had no row.
    const rows = fs
      .readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const undocumented = configKeys()
      .filter((key) => {
        const row = rows.find((r) => r.split('|')[1].includes(`\`${key.path}\``));
        if (!row) return true;
        // A row of several keys abbreviates the later variables as `…_REST`.
        const envCell = row.split('|')[2];
        return !envCell.includes(key.env) && !(key.env.includes('_') && envCell.includes('…_'));
      })
      .map((key) => key.path);
    expect(undocumented).toEqual([]);
  });
});
