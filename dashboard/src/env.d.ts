/** Stylesheets imported for their side effect: Vite bundles them into the one CSS file. */
declare module '*.css';
