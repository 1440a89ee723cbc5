#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx so that `npx coldsync` works
// straight after `npm ci`, with no build step to forget.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
