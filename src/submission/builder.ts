/**
 * The worker pool as submission's MessageBuilder: task errors that come back from the threads
 * become catalogue errors with a field pointer (a template that fails to render is 422
 * templating_error on /template/html, for instance).
 */
import type { WorkerPool } from '../workers/pool.js';
import { toAppError } from './task-errors.js';
import type { BuildRequest, BuildResult, FinishRequest, FinishResult, MessageBuilder } from './ports.js';
import type { RawContent } from './raw-content.js';

export class PoolMessageBuilder implements MessageBuilder {
  /** onSign: told how long each DKIM signature took (metrics). */
  constructor(
    private readonly pool: WorkerPool,
    private readonly onSign: (seconds: number) => void = () => {},
  ) {}

  async build(input: BuildRequest): Promise<BuildResult> {
    try {
      return await this.pool.build(input);
    } catch (err) {
      throw toAppError(err, input.template ? '/template' : '');
    }
  }

  async checkTemplate(parts: { html?: string; text?: string }): Promise<void> {
    try {
      // Nothing is remembered on the thread: the main thread keeps the verdict (template-check.ts).
      await this.pool.render({ ...parts, data: {}, check: true, checkOnly: true, cache: false });
    } catch (err) {
      throw toAppError(err, '/template');
    }
  }

  async parseContent(raw: Buffer): Promise<RawContent> {
    try {
      return await this.pool.rawContent(raw);
    } catch (err) {
      throw toAppError(err, '');
    }
  }

  async finish(inputs: FinishRequest[]): Promise<PromiseSettledResult<FinishResult>[]> {
    let settled: Awaited<ReturnType<WorkerPool['finishMany']>>;
    try {
      settled = await this.pool.finishMany(inputs);
    } catch (err) {
      // The task as a whole failed (pool stopping, thread crashed): every input failed with it.
      const reason = toAppError(err, '');
      return inputs.map(() => ({ status: 'rejected', reason }));
    }
    return settled.map((s): PromiseSettledResult<FinishResult> => {
      if (s.status === 'rejected') return { status: 'rejected', reason: toAppError(s.reason, '') };
      const { signSeconds, ...result } = s.value;
      if (signSeconds !== undefined) this.onSign(signSeconds);
      return { status: 'fulfilled', value: result };
    });
  }
}
