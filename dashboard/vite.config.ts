/**
 * The dashboard build: `npm run build:dashboard` (part of `npm run build`) writes dist/dashboard,
 * which the daemon serves under /dashboard (src/http/routes/dashboard.ts).
 *
 * The daemon answers with a strict Content-Security-Policy (script-src 'self'; style-src 'self'),
 * so the output must hold no inline script or style: no module-preload polyfill (an inline
 * helper in some setups) and no assets inlined as data: URLs into CSS or JS. File names carry
 * a content hash, which is what lets the daemon serve /dashboard/assets/* as immutable.
 */
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [preact({ prefreshEnabled: false, devToolsEnabled: false })],
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
