/**
 * The messages between WorkerPool (main thread) and worker.ts (worker threads). Both sides are
 * structured-cloned, so everything here is plain data.
 */
import type { GeneratedKey, GenerateKeyOptions } from './dkim.js';
import type { TaskErrorData } from './errors.js';
import type { InboundAttachmentTaskInput, InboundAttachmentTaskOutput, InboundPayloadTaskInput, InboundPayloadTaskOutput } from './inbound-tasks.js';
import type { RenderInput, RenderOutput } from './render.js';
import type { RawContentTaskInput, RawContentTaskOutput } from './submission-tasks.js';
import type { BuildInput, BuildOutput, FinishInput, FinishOutput } from './tasks.js';

export type WorkerRequest =
  | { task: 'build'; input: BuildInput }
  /** Composes and signs committed messages in one hop (the finishing stage): one answer per input, in order. */
  | { task: 'finishMany'; input: FinishInput[] }
  | { task: 'generateKey'; input: GenerateKeyOptions }
  /** A template rendered with data, nothing composed (POST /templates/{id}/render, issue 34). */
  | { task: 'render'; input: RenderInput }
  /** A received message's JSON for its route (issue 33). */
  | { task: 'inboundPayload'; input: InboundPayloadTaskInput }
  /** An attachment of a received message, for its link. */
  | { task: 'inboundAttachment'; input: InboundAttachmentTaskInput }
  /** What activity shows of a large SMTP-submitted message, read by mailparser (submission-tasks.ts). */
  | { task: 'rawContent'; input: RawContentTaskInput };

export type WorkerTask = WorkerRequest['task'];

/** What each task returns on success. */
export interface WorkerResults {
  build: BuildOutput;
  /** Each input's own answer: one failing message does not fail the others. */
  finishMany: WorkerResponse<FinishOutput>[];
  generateKey: GeneratedKey;
  render: RenderOutput;
  inboundPayload: InboundPayloadTaskOutput;
  inboundAttachment: InboundAttachmentTaskOutput;
  rawContent: RawContentTaskOutput;
}

/** A worker never rejects: failures come back as `ok: false` with plain error data. */
export type WorkerResponse<T> = { ok: true; value: T } | { ok: false; error: TaskErrorData };
