import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { campaignStatus, lastRuns } from "../sync/status.ts";
import { openWarehouse } from "../warehouse/connect.ts";
import { table } from "./output.ts";

function lag(seconds: number | null): string {
  if (seconds === null) return "never";
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}

const when = (date: Date | null | undefined) => (date ? `${date.toISOString().slice(0, 19)}Z` : "—");

export function register(program: Command): void {
  program
    .command("status")
    .description("checkpoints, last runs and lag per campaign")
    .action(async () => {
      const config = loadConfig(process.env);
      const warehouse = await openWarehouse(config.warehouse);
      try {
        const campaigns = await campaignStatus(warehouse.db, config.account);
        console.log(
          table(
            ["campaign", "status", "leads", "replies", "clicks", "opens", "leads synced", "events synced", "lag"],
            campaigns.map((row) => [
              row.name ? `${row.campaign_uid} ${row.name}`.slice(0, 48) : row.campaign_uid,
              row.status,
              row.leads,
              row.replies,
              row.link_clicks,
              row.email_opens,
              when(row.streams.leads),
              when(row.streams.email_opens),
              lag(row.lag_seconds),
            ]),
          ),
        );
        const runs = await lastRuns(warehouse.db, config.account);
        console.log(
          table(
            ["run", "trigger", "scope", "started", "seconds", "outcome", "requests", "retries", "rejected"],
            runs.map((run) => [
              run.id,
              run.trigger,
              run.scope ?? "account",
              when(run.started_at),
              run.finished_at ? ((run.finished_at.getTime() - run.started_at.getTime()) / 1000).toFixed(1) : "running",
              run.outcome,
              run.requests,
              run.retries,
              run.rejected,
            ]),
          ),
        );
      } finally {
        await warehouse.destroy();
      }
    });
}
