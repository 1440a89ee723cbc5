import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { openRuntime } from "../runtime.ts";
import { verify } from "../sync/verify.ts";
import { commandLogger, table } from "./output.ts";

export function register(program: Command): void {
  program
    .command("verify")
    .description("compare warehouse counts with upstream totals per campaign and stream; exit 1 on a mismatch")
    .option("--campaign <uid>", "check one campaign only")
    .action(async (options: { campaign?: string }) => {
      const config = loadConfig(process.env, ["apiKey"]);
      const runtime = await openRuntime(config, { logger: commandLogger(config) });
      try {
        const rows = await verify(runtime.syncContext({ trigger: "cli" }), options.campaign ? { campaignUid: options.campaign } : {});
        console.log(
          table(
            ["campaign", "stream", "upstream", "warehouse", "rejected", "check"],
            rows.map((row) => [row.campaignUid ?? "account", row.stream, row.upstream, row.warehouse, row.rejected, row.ok ? "ok" : "MISMATCH"]),
          ),
        );
        const mismatches = rows.filter((row) => !row.ok).length;
        console.log(mismatches === 0 ? `all ${rows.length} checks match` : `${mismatches} of ${rows.length} checks do not match`);
        process.exitCode = mismatches === 0 ? 0 : 1;
      } finally {
        await runtime.close();
      }
    });
}
