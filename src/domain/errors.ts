/**
 * The one error catalogue of postrider.
 *
 * Every error the daemon can answer with is listed here once, with its HTTP status and,
 * where the error can happen during SMTP submission, its SMTP reply (RFC 5321 4.2 reply code
 * and RFC 3463 enhanced status code). The HTTP error handler and the SMTP reply mapper are the
 * only two places that turn an AppError into wire bytes. test/unit/errors.test.ts checks that
 * every code here is documented in docs/api.md, so code and docs cannot drift.
 */

export interface CatalogueEntry {
  status: number;
  title: string;
  /** SMTP reply used when the same condition happens on the submission listener. */
  smtp: { code: number; enhanced: string };
}

export const ERROR_CATALOGUE = {
  // --- codes of the API specification (section 7), statuses from DESIGN.md ---
  invalid_json: { status: 400, title: 'Malformed JSON body', smtp: { code: 501, enhanced: '5.5.2' } },
  validation_failed: { status: 422, title: 'Validation failed', smtp: { code: 550, enhanced: '5.6.0' } },
  resource_limit_exceeded: {
    status: 403,
    title: 'Resource limit exceeded',
    smtp: { code: 552, enhanced: '5.3.4' },
  },
  channel_not_found: { status: 404, title: 'Channel not found', smtp: { code: 535, enhanced: '5.7.8' } },
  invalid_channel: { status: 422, title: 'No channel given', smtp: { code: 535, enhanced: '5.7.8' } },
  domain_unverified: { status: 403, title: 'Domain not verified', smtp: { code: 550, enhanced: '5.7.1' } },
  account_forbidden: {
    status: 403,
    title: 'Account not allowed to send',
    smtp: { code: 550, enhanced: '5.7.1' },
  },
  recipient_forbidden: {
    status: 403,
    title: 'Recipient not allowed',
    smtp: { code: 550, enhanced: '5.7.1' },
  },
  recipients_suppressed: {
    status: 422,
    title: 'All recipients are suppressed',
    smtp: { code: 550, enhanced: '5.7.1' },
  },
  templating_error: { status: 422, title: 'Template could not be rendered', smtp: { code: 554, enhanced: '5.6.0' } },
  send_limit_exceeded: { status: 403, title: 'Send limit exceeded', smtp: { code: 550, enhanced: '5.7.1' } },
  // --- codes the specification names only by status ---
  bad_request: { status: 400, title: 'Malformed request', smtp: { code: 501, enhanced: '5.5.4' } },
  unauthorized: { status: 401, title: 'Invalid credential', smtp: { code: 535, enhanced: '5.7.8' } },
  forbidden: { status: 403, title: 'Forbidden', smtp: { code: 550, enhanced: '5.7.1' } },
  // --- the web dashboard's sessions (sessions/service.ts); never answered over SMTP ---
  session_expired: { status: 401, title: 'Session expired', smtp: { code: 535, enhanced: '5.7.8' } },
  account_key_required: { status: 403, title: 'Account-level API key required', smtp: { code: 550, enhanced: '5.7.1' } },
  not_found: { status: 404, title: 'Not found', smtp: { code: 550, enhanced: '5.1.1' } },
  method_not_allowed: { status: 405, title: 'Method not allowed', smtp: { code: 502, enhanced: '5.5.1' } },
  conflict: { status: 409, title: 'Conflict with the resource state', smtp: { code: 554, enhanced: '5.5.0' } },
  payload_too_large: { status: 413, title: 'Payload too large', smtp: { code: 552, enhanced: '5.3.4' } },
  uri_too_long: { status: 414, title: 'URI too long', smtp: { code: 500, enhanced: '5.5.2' } },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    smtp: { code: 554, enhanced: '5.6.1' },
  },
  rate_limit_exceeded: { status: 429, title: 'Too many requests', smtp: { code: 451, enhanced: '4.7.0' } },
  storage_full: { status: 507, title: 'Storage full', smtp: { code: 452, enhanced: '4.3.1' } },
  service_unavailable: { status: 503, title: 'Service unavailable', smtp: { code: 421, enhanced: '4.3.2' } },
  // Cluster mode: PostgreSQL cannot be reached, so nothing was committed (issue 32). RFC 3463
  // 4.3.0: a transient problem of the receiving system; the session stays open for a retry.
  store_unavailable: { status: 503, title: 'Store unavailable', smtp: { code: 451, enhanced: '4.3.0' } },
  // Cluster mode: PostgreSQL left a call unanswered past store.requestTimeoutMs
  // (domain/request-deadline.ts); it may still commit, so the outcome is unknown.
  store_timeout: { status: 503, title: 'Store did not answer in time', smtp: { code: 451, enhanced: '4.3.0' } },
  internal_error: { status: 500, title: 'Internal error', smtp: { code: 451, enhanced: '4.3.0' } },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** One problem with one request field, keyed by JSON pointer in AppError.errors. */
export interface FieldError {
  message: string;
  code: string;
  /** templating_error: where in the template part the error is (from 1), when known. */
  line?: number;
  column?: number;
}

export type FieldErrors = Record<string, FieldError[]>;

/**
 * Most field errors one answer lists (issue 29): a body of a million bad values must not become
 * a million error objects and a 200 MB 422. The rest are counted (`errorsOmitted` of the problem).
 */
export const MAX_FIELD_ERRORS = 100;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors?: FieldErrors;
  /** Field errors found beyond those in `errors` and not kept (FieldErrorList's cap). */
  readonly errorsOmitted?: number;
  /** Extra response headers (Retry-After for 429, for instance). */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail?: string,
    opts: { errors?: FieldErrors; errorsOmitted?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail ?? ERROR_CATALOGUE[code].title, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.errors = opts.errors;
    this.errorsOmitted = opts.errorsOmitted;
    this.headers = opts.headers;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/**
 * Collects field errors so a request reports all of them together, not only the first; beyond
 * MAX_FIELD_ERRORS they are only counted, so that memory stays bounded whatever the body.
 */
export class FieldErrorList {
  private readonly map: FieldErrors = {};
  private kept = 0;
  private omitted = 0;

  add(pointer: string, code: string, message: string): void {
    if (this.full) {
      this.omitted++;
      return;
    }
    (this.map[pointer] ??= []).push({ code, message });
    this.kept++;
  }

  /** True once MAX_FIELD_ERRORS are kept: what is added now is only counted (its pointer is not read). */
  get full(): boolean {
    return this.kept >= MAX_FIELD_ERRORS;
  }

  get size(): number {
    return Object.keys(this.map).length;
  }

  /** Throws validation_failed when anything was collected. */
  throwIfAny(detail = 'The request has invalid fields'): void {
    if (this.size > 0) throw new AppError('validation_failed', detail, { errors: this.map, errorsOmitted: this.omitted });
  }

  toJSON(): FieldErrors {
    return this.map;
  }
}

/** Escapes a property name for use as one JSON pointer segment (RFC 6901 section 4). */
export function pointerSegment(name: string | number): string {
  return String(name).replace(/~/g, '~0').replace(/\//g, '~1');
}
