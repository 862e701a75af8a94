import { useState } from 'preact/hooks';
import type { MessageDetails } from '../wire';

/**
 * HTML in an iframe served by the daemon under its own CSP (GET /dashboard/messages/{id}/html,
 * GET /dashboard/templates/{id}/html): sandboxed (no scripts, an opaque origin), remote images
 * blocked until the user asks, then reloaded with ?images=1 (`src(true)`). sandbox="" here too,
 * and no referrer. The iframe is keyed by its address: a new address is a new frame, whose first
 * load adds nothing to the tab's history (a live preview changes it often).
 */
export function HtmlPreview(props: { src: (images: boolean) => string; title: string }) {
  const [images, setImages] = useState(false);
  const src = props.src(images);
  return (
    <div class="html-preview">
      <RemoteImages loaded={images} onLoad={() => setImages(true)} />
      <iframe key={src} class="mail-frame" title={props.title} src={src} sandbox="" referrerPolicy="no-referrer" />
    </div>
  );
}

/** Whether the frame above loads remote images, and the button that lets it. */
export function RemoteImages(props: { loaded: boolean; onLoad: () => void }) {
  return (
    <div class="actions">
      {props.loaded ? (
        <p class="muted">Remote images are loaded: their servers saw this view.</p>
      ) : (
        <>
          <p class="muted">Remote images are blocked (they tell the sender the mail was opened).</p>
          <button type="button" class="button button-small" onClick={props.onLoad}>
            Load remote images
          </button>
        </>
      )}
    </div>
  );
}

function messageHtml(id: string) {
  return (images: boolean) => `/dashboard/messages/${encodeURIComponent(id)}/html${images ? '?images=1' : ''}`;
}

/** The text part, the rendered HTML and the raw message (first MiB) of a message. */
export function MessageBody(props: { m: MessageDetails; headingLevel?: 3 | 4 }) {
  const { m } = props;
  const H = props.headingLevel === 4 ? 'h4' : 'h3';
  const hasHtml = typeof m.html === 'string' && m.html !== '';
  const hasText = typeof m.text === 'string' && m.text !== '';
  return (
    <>
      {/* Keyed by message: remote images allowed for one message are not allowed for the next one shown in the same place. */}
      {hasHtml && <HtmlPreview src={messageHtml(m.messageId)} title="The message as HTML" key={m.messageId} />}
      {hasText && (
        <section aria-labelledby="text-title">
          <H id="text-title">Text</H>
          <pre class="mail-text" tabIndex={0}>
            {m.text}
          </pre>
        </section>
      )}
      {!hasHtml && !hasText && <p class="muted">{m.mailSource === 'smtp' ? 'Sent over SMTP: the parts are in the raw message below.' : 'This message has no body.'}</p>}
      {m.body && (
        <details class="raw">
          <summary>Raw message{m.bodyTruncated ? ' (first MiB)' : ''}</summary>
          <pre class="mail-text" tabIndex={0}>
            {m.body}
          </pre>
        </details>
      )}
      {m.attachments.length > 0 && (
        <p>
          Attachments: {m.attachments.map((a) => `${a.fileName} (${a.disposition}, ${a.size.toLocaleString()} bytes)`).join(', ')}
        </p>
      )}
    </>
  );
}
