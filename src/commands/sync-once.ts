import type { Logger } from "../logger.ts";
import type { Runtime } from "../runtime.ts";
import type { RunTrigger } from "../sync/context.ts";
import { runFullSync, type RunSummary } from "../sync/runs.ts";
import { migrateToLatest } from "../warehouse/migrate.ts";
import { progressDisplay, runSummaryText } from "./output.ts";

/**
 * One full walk in this process, as `sync --once` and `demo` run it: pending
 * migrations first, progress while it runs, the summary at the end, exit code
 * 0 only if every stream finished. Ctrl-C stops after the page in flight commits.
 */
export async function syncOnce(runtime: Runtime, logger: Logger, options: { trigger: RunTrigger; campaignUid?: string }): Promise<RunSummary> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await migrateToLatest(runtime.warehouse);
    const progress = progressDisplay(logger);
    const summary = await runFullSync(runtime.syncContext({ trigger: options.trigger, signal: controller.signal }), {
      ...(options.campaignUid ? { campaignUid: options.campaignUid } : {}),
      onProgress: (state) => progress.update(state),
    });
    progress.stop();
    console.log(runSummaryText(summary));
    process.exitCode = summary.outcome === "succeeded" ? 0 : 1;
    return summary;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
