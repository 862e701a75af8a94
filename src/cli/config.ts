/** postrider config print */
import { loadConfig } from '../config/load.js';
import { renderExampleConfig } from '../config/example.js';
import { configKeys } from '../config/keys.js';
import { maskSecrets } from '../config/mask-secrets.js';
import { parse, UsageError, type CommandIo } from './args.js';

const USAGE = `Usage:
  postrider config print [--config PATH] [--keys] [--show-secrets]
  postrider config example

Prints the effective configuration (embedded defaults, then the config file, then POSTRIDER_*
environment variables) as JSON, with credentials masked (metrics.token, the password of
store.postgresUrl) unless --show-secrets. --keys lists every key with its environment variable
and meaning.
"config example" prints a commented config file with every key and its default.`;

export async function configCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals, help } = parse(argv, { config: { type: 'string' }, keys: { type: 'boolean' }, 'show-secrets': { type: 'boolean' } }, USAGE, { print: 1, example: 1 });
  if (help) {
    io.out(USAGE);
    return 0;
  }
  if (positionals[0] === 'example') {
    io.out(renderExampleConfig().trimEnd());
    return 0;
  }
  if (positionals[0] !== 'print') throw new UsageError(positionals[0] ? `unknown subcommand "${positionals[0]}"` : 'missing subcommand', USAGE);
  if (values.keys) {
    for (const k of configKeys()) io.out(`${k.path}\t${k.env}\t${k.doc}`);
    return 0;
  }
  const config = loadConfig({ configPath: values.config, env: io.env });
  io.out(JSON.stringify(values['show-secrets'] ? config : maskSecrets(config), null, 2));
  return 0;
}
