/**
 * The bytes of a compiled MIME tree (nodemailer's MimeNode, from MailComposer.compile()) written
 * in one synchronous pass, where MimeNode.build() streams them: a PassThrough per part, a
 * stream.pipeline per part and per stage (each aborting an AbortController with a DOMException
 * when it ends), a setImmediate between steps. For the messages postrider composes (string and
 * Buffer content only) that machinery was most of the composition's CPU on the worker threads.
 *
 * The output is MimeNode.build()'s, byte for byte: the same steps in the same order with the
 * same parts of nodemailer (each node's buildHeaders, its getTransferEncoding, its own qp or
 * base64 Encoder fed the content as the one chunk build() feeds it, the final newline and the
 * bare-LF-to-CRLF pass of `newline: 'windows'`); test/unit/mime-bytes.test.ts compares the two on
 * many messages. A tree this pass does not cover (content from a stream, a file, a URL, raw
 * nodes, transforms, another newline mode) gives null, and the caller builds it the streaming way.
 */
import type { Transform } from 'node:stream';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64/index.js';
import type MimeNode from 'nodemailer/lib/mime-node/index.js';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp/index.js';
import { joinOwned } from './bytes.js';

/** The parts of a MimeNode this pass reads that its declaration file leaves out (its private state). */
interface NodeState {
  _raw?: unknown;
  _transforms?: unknown[];
  _processFuncs?: unknown[];
}

const CRLF = Buffer.from('\r\n');

/** The message MimeNode.build() would give for this root node, or null when the tree is not one this pass covers. */
export function mimeBytes(root: MimeNode): Buffer | null {
  const state = root as unknown as NodeState;
  if (root.newline !== 'windows' || state._transforms?.length || state._processFuncs?.length || !covered(root)) return null;
  const out: Buffer[] = [];
  writeNode(root, out);
  return messageOf(out);
}

/** The stages build() puts after the tree with `newline: 'windows'`: LastNewline (the message ends with a line break), then LeWindows. */
export function messageOf(out: Buffer[]): Buffer {
  const last = out.findLast((b) => b.length > 0);
  if (!last || last[last.length - 1] === 0x0d) out.push(last ? Buffer.from('\n') : CRLF);
  else if (last[last.length - 1] !== 0x0a) out.push(CRLF);
  return toCrlf(joinOwned(out));
}

/**
 * Whether every node of the tree holds its content as a string or a Buffer (or none). Checked
 * before anything is written: writing builds the headers, which changes the nodes, and a tree
 * found uncovered halfway would then go to build() changed.
 */
function covered(node: MimeNode): boolean {
  if ((node as unknown as NodeState)._raw) return false;
  const content = node.content;
  if (content !== undefined && content !== null && content !== '' && typeof content !== 'string' && !Buffer.isBuffer(content)) return false;
  return node.childNodes.every(covered);
}

/** MimeNode.stream() of one node: its headers, its content encoded, then its children between boundaries. */
function writeNode(node: MimeNode, out: Buffer[]): void {
  const transferEncoding = node.getTransferEncoding();
  out.push(Buffer.from(node.buildHeaders() + '\r\n\r\n'));
  if (node.content) out.push(encoded(node, transferEncoding));
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push(Buffer.from((i > 0 ? '\r\n' : '') + '--' + String(node.boundary) + '\r\n'));
    writeNode(child, out);
  });
  out.push(Buffer.from('\r\n--' + String(node.boundary) + '--\r\n'));
}

/** The node's content through the encoder stream() would pipe it through, run synchronously. */
function encoded(node: MimeNode, transferEncoding: string | false): Buffer {
  const content = node.content as string | Buffer;
  // stream()'s own choice: outside of text a lone CR or LF is data.
  return encodeContent(content, transferEncoding, !/^text\//i.test(node.contentType || ''));
}

/** Content as stream() writes it for the transfer encoding: through a base64 or qp Encoder, or as it is. */
export function encodeContent(content: string | Buffer, transferEncoding: string | false, binary: boolean): Buffer {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (transferEncoding === 'base64') return runEncoder(new Base64Encoder({}), bytes);
  if (transferEncoding === 'quoted-printable') return runEncoder(new QpEncoder({ binary }), bytes);
  return bytes;
}

/**
 * An encoder's output for one chunk and the end of its input. Both steps of nodemailer's encoders
 * call back synchronously (they only push), so no stream is piped: what they push is collected.
 */
function runEncoder(encoder: Transform, bytes: Buffer): Buffer {
  const chunks: Buffer[] = [];
  encoder.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (chunk !== null && chunk !== undefined) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), encoding));
    return true;
  };
  let error: unknown;
  const done = (err?: Error | null): void => {
    if (err) error = err;
  };
  // 'buffer': the encoding a Writable hands _transform for a Buffer chunk (not a BufferEncoding).
  if (bytes.length > 0) encoder._transform(bytes, 'buffer' as BufferEncoding, done);
  encoder._flush?.(done);
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return Buffer.concat(chunks);
}

/** LeWindows over the whole message: every LF not preceded by CR becomes CRLF. */
function toCrlf(message: Buffer): Buffer {
  let at = message.indexOf(0x0a);
  let bare = 0;
  for (; at !== -1; at = message.indexOf(0x0a, at + 1)) if (at === 0 || message[at - 1] !== 0x0d) bare++;
  if (bare === 0) return message;
  const out = Buffer.allocUnsafeSlow(message.length + bare);
  let from = 0;
  let to = 0;
  for (at = message.indexOf(0x0a); at !== -1; at = message.indexOf(0x0a, at + 1)) {
    if (at > 0 && message[at - 1] === 0x0d) continue;
    to += message.copy(out, to, from, at);
    out[to++] = 0x0d;
    out[to++] = 0x0a;
    from = at + 1;
  }
  message.copy(out, to, from);
  return out;
}
