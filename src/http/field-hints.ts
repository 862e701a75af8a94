/**
 * "Did you mean" hints for unknown fields (issue 30): the names other providers' send APIs use
 * (Resend, Postmark, SendGrid, Mailgun, SES), and the same name spelled in another case or with
 * `_`/`-`. The 422 keeps its `unknown_field` code; only the message gains the hint.
 *
 * A hint is given only when the field it names is a property of the object the unknown field was
 * found in (the schema says which), so `reply_to` on a channel body gets no `replyTo` hint.
 */

interface Hint {
  /** Our field: a property of the same object, or a path inside one (`tracking.opens`). */
  field: string;
  /** Said after the hint, when the field works differently from the other provider's. */
  note?: string;
}

const TEMPLATE_NOTE = 'a stored template is named inside template: {id | alias, version?, data}';

/**
 * Other providers' names, compared in lower case without `_`, `-` and `:` (so `reply_to`,
 * `ReplyTo`, `replyto` and `reply-to` are one entry). Names that differ from ours only in case or
 * separators need no entry: see didYouMean.
 */
const OTHER_PROVIDERS: Readonly<Record<string, Hint>> = {
  // from: Postmark From, SendGrid from.email, Mailgun from, SES Source
  fromemail: { field: 'from' },
  fromaddress: { field: 'from' },
  sender: { field: 'from' },
  source: { field: 'from' },
  // to: SendGrid personalizations, SES Destination
  toemail: { field: 'to' },
  recipients: { field: 'to' },
  recipient: { field: 'to' },
  personalizations: { field: 'to' },
  destination: { field: 'to' },
  replytoaddresses: { field: 'replyTo' },
  replytolist: { field: 'replyTo' },
  // content: Postmark HtmlBody/TextBody, SendGrid content, SES Body
  htmlbody: { field: 'html' },
  bodyhtml: { field: 'html' },
  htmlcontent: { field: 'html' },
  textbody: { field: 'text' },
  bodytext: { field: 'text' },
  textcontent: { field: 'text' },
  plaintext: { field: 'text' },
  plain: { field: 'text' },
  content: { field: 'html', note: 'the content goes in html and text, both strings' },
  body: { field: 'html', note: 'the content goes in html and text, both strings' },
  // templates: Postmark TemplateId/TemplateAlias/TemplateModel, SendGrid template_id and
  // dynamic_template_data, Mailgun template and h:X-Mailgun-Variables
  templateid: { field: 'template.id', note: TEMPLATE_NOTE },
  templatealias: { field: 'template.alias', note: TEMPLATE_NOTE },
  templatename: { field: 'template.alias', note: TEMPLATE_NOTE },
  templateversion: { field: 'template.version', note: TEMPLATE_NOTE },
  templatemodel: { field: 'template.data' },
  templatedata: { field: 'template.data' },
  dynamictemplatedata: { field: 'template.data' },
  templatevariables: { field: 'template.data' },
  variables: { field: 'template.data' },
  substitutions: { field: 'template.data' },
  mergevars: { field: 'template.data' },
  // the rest: tags, metadata, attachments, tracking
  tag: { field: 'tags' },
  categories: { field: 'tags' },
  category: { field: 'tags' },
  otag: { field: 'tags' },
  customargs: { field: 'metadata' },
  uservariables: { field: 'metadata' },
  attachment: { field: 'attachments' },
  files: { field: 'attachments' },
  trackopens: { field: 'tracking.opens' },
  otrackingopens: { field: 'tracking.opens' },
  opentracking: { field: 'tracking.opens' },
  tracklinks: { field: 'tracking.links' },
  trackclicks: { field: 'tracking.links' },
  otrackingclicks: { field: 'tracking.links' },
  clicktracking: { field: 'tracking.links' },
  // inside an attachment (Postmark Name/ContentType, SendGrid filename/type, Resend path)
  name: { field: 'fileName' },
  filename: { field: 'fileName' },
  type: { field: 'contentType' },
  mimetype: { field: 'contentType' },
  data: { field: 'content' },
  contentid: { field: 'contentId' },
  cid: { field: 'contentId' },
  // inside an address (Postmark's "Name <email>" strings aside)
  address: { field: 'email' },
  emailaddress: { field: 'email' },
  displayname: { field: 'name' },
};

/** The comparison form of a field name: lower case, without `_`, `-`, `:` and spaces. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[-_: ]/g, '');
}

/**
 * The hint for the unknown field `name` in an object whose schema has the properties `known`:
 * `did you mean "replyTo"?`, or undefined when no field of this object fits.
 */
export function didYouMean(name: string, known: readonly string[]): string | undefined {
  if (name.length > 64) return undefined; // no field of ours or theirs is that long
  const f = folded(name);
  // Our own name in another case or with separators: `reply_to`, `ReplyTo`, `file_name`.
  const same = known.find((k) => folded(k) === f);
  let hint: Hint | undefined = same === undefined ? undefined : { field: same };
  // Own properties only: the unknown field is the client's, and `constructor` or `__proto__` would
  // otherwise find Object.prototype's (a 500 found by the fuzz soak).
  hint ??= Object.hasOwn(OTHER_PROVIDERS, f) ? OTHER_PROVIDERS[f] : undefined;
  if (!hint || hint.field === name) return undefined;
  // `template.data` at the top of a send; `data` in a broadcast's message entry, which has it itself.
  const path = hint.field.split('.');
  const field = known.includes(path[0]) ? hint.field : known.includes(path[path.length - 1]) ? path[path.length - 1] : undefined;
  if (field === undefined || field === name) return undefined;
  return `did you mean "${field}"?${hint.note ? ` (${hint.note})` : ''}`;
}
