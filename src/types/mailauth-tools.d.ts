// mailauth's internal helpers module (CommonJS, untyped); only its exports object is used.
declare module 'mailauth/lib/tools.js' {
  const tools: Record<string, unknown>;
  export default tools;
}
