import type { TestProject } from "vitest/node";
import { MissingServicesError, startServices, type Services } from "./services.ts";

declare module "vitest" {
  export interface ProvidedContext {
    services: Services;
  }
}

/** Resolves PostgreSQL and Redis once for the whole run and hands their URLs to every file. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let started: Awaited<ReturnType<typeof startServices>>;
  try {
    started = await startServices(process.env);
  } catch (error) {
    if (!(error instanceof MissingServicesError)) throw error;
    // One line, not a stack trace: the fix is a setting, not a bug.
    console.error(error.message);
    process.exit(1);
  }
  const { services, stop } = started;
  project.provide("services", services);
  return stop;
}
