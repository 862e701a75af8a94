#!/usr/bin/env -S node --no-memory-reducer
// The postrider command. The TypeScript sources are compiled to dist/ by `npm run build`.
// The first line's node flags are the daemon's (systemd/postrider.service says why); `node
// bin/postrider.js` ignores them, `npm start`, the unit and the installed `postrider` pass them.
import { main } from '../dist/main.js';

const io = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n'), env: process.env };
main(process.argv.slice(2), io).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`postrider: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
