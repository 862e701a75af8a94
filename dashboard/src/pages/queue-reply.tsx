import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import type { LastReply } from '../wire';

/** "451 4.7.1 Greylisted" as the reply reads; the MX host apart. */
function replyText(r: LastReply): string {
  const code = [r.smtpCode, r.enhancedCode].filter((x) => x !== undefined).join(' ');
  return r.response.startsWith(code) || !code ? r.response : `${code} ${r.response}`;
}

/** A delivery attempt's last reply: its outcome, the reply text, the MX host and when. */
export function ReplyCell(props: { reply: LastReply | null }) {
  const r = props.reply;
  if (!r) return <span class="muted">No attempt yet</span>;
  return (
    <>
      <StatusBadge status={r.outcome} /> <code class="reply-text">{replyText(r)}</code>
      <small class="muted">
        {r.mx ? `${r.mx}, ` : ''}
        <RelativeTime at={r.at} />
      </small>
    </>
  );
}
