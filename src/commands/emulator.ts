import type { Command } from "commander";
import type { z } from "zod";
import { ConfigError, configSchema, listenHost, loadLogLevel } from "../config.ts";
import { readable } from "../emulator/http/validation.ts";
import { clockMode, driftKind, driftMode, emulatorOptions, faultMode, listOrder, seedScale, workspacesShape, type EmulatorOptions } from "../emulator/options.ts";
import { API_PREFIX } from "../upstream/endpoints.ts";
import { flag } from "./flags.ts";

/** `--port` and `--host` are read by the rules of the settings every other command listens by, so their problems read alike. */
const portFlag = flag(configSchema.shape.COLDSYNC_HTTP_PORT.unwrap());
const hostFlag = flag(listenHost);

/** `coldsync emulator`: serves the upstream API locally from a seed until interrupted (contract C). */

interface Flags {
  port: string;
  host: string;
  seed: string;
  apiKeys: string;
  scale: string;
  order: string;
  workspaces: string;
  rateLimit: string;
  latency: string;
  faults: string;
  drift: string;
  driftKinds?: string;
  clock: string;
  admin?: boolean;
}

const FLAG_OF: Record<string, string> = {
  port: "--port",
  host: "--host",
  seed: "--seed",
  apiKeys: "--api-keys",
  scale: "--scale",
  order: "--order",
  workspaces: "--workspaces",
  rateLimit: "--rate-limit",
  latencyMs: "--latency",
  faults: "--faults",
  drift: "--drift",
  driftKinds: "--drift-kinds",
  clock: "--clock",
};

/** Whole numbers become numbers; anything else stays text for the schema to reject by name. */
function integer(text: string): number | string {
  return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
}

/** A flag read by a setting's rule: its value, or its problems under its name. */
function readByRule<T>(name: string, rule: z.ZodType<T, string>, given: string): { value?: T; problems: string[] } {
  const read = rule.safeParse(given);
  return read.success ? { value: read.data, problems: [] } : { problems: read.error.issues.map((issue) => `${name}: ${issue.message}`) };
}

function optionsFrom(flags: Flags): EmulatorOptions {
  const port = readByRule("--port", portFlag, flags.port);
  const host = readByRule("--host", hostFlag, flags.host);
  const parsed = emulatorOptions.safeParse(
    {
      port: port.value ?? 0,
      host: host.value,
      seed: integer(flags.seed),
      apiKeys: flags.apiKeys.split(",").map((key) => key.trim()),
      scale: flags.scale,
      order: flags.order,
      workspaces: flags.workspaces,
      rateLimit: integer(flags.rateLimit),
      latencyMs: integer(flags.latency),
      faults: flags.faults,
      drift: flags.drift,
      driftKinds: flags.driftKinds?.split(",").map((kind) => kind.trim()),
      clock: flags.clock,
      admin: flags.admin === true,
    },
    { error: readable },
  );
  const ruleProblems = [...port.problems, ...host.problems];
  if (parsed.success && ruleProblems.length === 0) return parsed.data;
  const optionProblems = (parsed.error?.issues ?? []).map((issue) => {
    const [field, index] = issue.path;
    const flag = FLAG_OF[String(field)] ?? String(field);
    return `${flag}${index === undefined ? "" : ` (item ${Number(index) + 1})`}: ${issue.message}`;
  });
  throw new ConfigError([...ruleProblems, ...optionProblems]);
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

export function register(program: Command): void {
  program
    .command("emulator")
    .description("serves the upstream API locally from a seed (contract part A), until interrupted")
    .option("--port <n>", "port to listen on; 0 picks a free one", "4010")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--seed <n>", "seed of the generated data", "1")
    .option("--api-keys <keys>", "comma-separated API keys, one account each", "demo")
    .option("--scale <scale>", `generated data volume: ${seedScale.options.join(", ")}`, "small")
    .option("--order <order>", `listing order: ${listOrder.options.join(", ")}`, "asc")
    .option("--workspaces <shape>", `workspace listing shape: ${workspacesShape.options.join(", ")}`, "bare")
    .option("--rate-limit <n>", "requests per second per key, then 429; 0 for none", "0")
    .option("--latency <ms>", "milliseconds added to every API answer", "0")
    .option("--faults <mode>", `injected faults: ${faultMode.options.join(", ")}`, "none")
    .option("--drift <mode>", `deviations from the spec in answers: ${driftMode.options.join(", ")}`, "none")
    .option("--drift-kinds <kinds>", `comma-separated drift kinds in play (default: all but total-missing): ${driftKind.options.join(", ")}`)
    .option("--clock <mode>", `simulated clock: ${clockMode.options.join(", ")} (wall: simulated time also elapses at real speed)`, "manual")
    .option("--admin", "serve /admin/ routes: simulated clock, ground truth, settings")
    .action(async (flags: Flags) => {
      const level = loadLogLevel();
      const options = optionsFrom(flags);
      // Loaded only when the command runs: `emulator --help` needs neither the web server nor the logger.
      const [{ pino }, { createLogger }, { startEmulator }] = await Promise.all([import("pino"), import("../logger.ts"), import("../emulator/server.ts")]);
      const logger = createLogger({ level, name: "coldsync-emulator", destination: pino.destination(2) });
      const emulator = await startEmulator(options, logger);
      console.log(`coldsync emulator listening on ${emulator.url} (API at ${emulator.url}${API_PREFIX}/)`);
      console.log(`api keys: ${options.apiKeys.join(", ")}`);
      console.log(
        `seed ${options.seed}, scale ${options.scale}, order ${options.order}, workspaces ${options.workspaces}, ` +
          `faults ${options.faults}, drift ${options.drift}${options.driftKinds ? ` (${options.driftKinds.join(", ")})` : ""}, rate limit ${options.rateLimit || "none"}, latency ${options.latencyMs} ms, clock ${options.clock}, admin ${options.admin ? "on" : "off"}`,
      );
      const signal = await waitForSignal();
      await emulator.close();
      console.log(`emulator stopped (${signal})`);
    });
}

