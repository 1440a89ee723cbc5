import type { TestProject } from "vitest/node";
import { startServices, type Services } from "./services.ts";

declare module "vitest" {
  export interface ProvidedContext {
    services: Services;
  }
}

/** Resolves PostgreSQL and Redis once for the whole run and hands their URLs to every file. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { services, stop } = await startServices(process.env);
  project.provide("services", services);
  return stop;
}
