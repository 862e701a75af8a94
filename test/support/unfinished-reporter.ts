/**
 * A vitest reporter that names the test files whose test process ended before they finished,
 * and the tests that were running then. Vitest itself reports such a crash (a native fault, an
 * out-of-memory kill, a signal) only as "Worker exited unexpectedly", without the file: one CI run
 * lost a file that way and the log could not say which. Beside the default reporter; it prints
 * nothing when every file finished.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class UnfinishedReporter implements Reporter {
  private readonly started = new Map<string, TestModule>();

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, module);
  }

  onTestModuleEnd(module: TestModule): void {
    this.started.delete(module.moduleId);
  }

  onTestRunEnd(): void {
    for (const module of this.started.values()) {
      const running = [...module.children.allTests()].filter((t) => t.result().state === 'pending').map((t) => t.fullName);
      process.stderr.write(
        `\n[unfinished] ${module.relativeModuleId}: its test process ended before the file finished` +
          (running.length > 0 ? `; not finished: ${running.join(' | ')}` : '') +
          '\n',
      );
    }
  }
}
