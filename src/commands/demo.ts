import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { startEmulator } from "../emulator/server.ts";
import { openRuntime } from "../runtime.ts";
import { commandLogger, table } from "./output.ts";
import { syncOnce } from "./sync-once.ts";

const DEMO_KEY = "demo";

export function register(program: Command): void {
  program
    .command("demo")
    .description("emulator + embedded warehouse + one sync, then the campaign funnel; needs no services")
    .option("--seed <n>", "emulator seed", "1")
    .action(async (options: { seed: string }) => {
      const seed = Number(options.seed);
      if (!Number.isInteger(seed)) throw new Error(`--seed: must be an integer, got "${options.seed}"`);
      const emulator = await startEmulator({ seed, scale: "small", apiKeys: [DEMO_KEY] });
      try {
        const config = loadConfig({ ...process.env, COLDSYNC_API_URL: emulator.url, COLDSYNC_API_KEY: DEMO_KEY, COLDSYNC_RATE_LIMIT: "200" });
        const logger = commandLogger(config);
        const where = config.warehouse.databaseUrl ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite in ${config.warehouse.dataDir}/pglite`;
        console.log(`emulator on ${emulator.url}; warehouse: ${where}, schema ${config.warehouse.schema}`);
        const runtime = await openRuntime(config, { logger });
        try {
          const summary = await syncOnce(runtime, logger, { trigger: "demo" });
          if (summary.outcome === "aborted") return;
          const funnel = await runtime.warehouse.db
            .selectFrom("campaign_funnel")
            .select(["name", "status", "leads", "emails_sent", "opened", "clicked", "replied", "positive_replies", "open_rate", "reply_rate"])
            .orderBy("emails_sent", "desc")
            .orderBy("name")
            .execute();
          const percent = (rate: number | null) => (rate === null ? "—" : `${(Number(rate) * 100).toFixed(1)}%`);
          console.log(
            table(
              ["campaign", "status", "leads", "sent", "opened", "clicked", "replied", "positive", "open rate", "reply rate"],
              funnel.map((row) => [
                String(row.name ?? "").slice(0, 40),
                row.status,
                row.leads,
                row.emails_sent,
                row.opened,
                row.clicked,
                row.replied,
                row.positive_replies,
                percent(row.open_rate),
                percent(row.reply_rate),
              ]),
            ),
          );
          console.log("query it yourself: SELECT * FROM coldsync.campaign_funnel; (see README, \"The warehouse\")");
        } finally {
          await runtime.close();
        }
      } finally {
        await emulator.close();
      }
    });
}
