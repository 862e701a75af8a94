import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { replyText, type LastReply } from './queue-types';

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
