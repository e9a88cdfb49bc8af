import { createRuntime } from "../../src/index.js";
import { createVmBackend } from "../support/vm-backend.js";
import { defineChainConformance } from "./chain-suite.js";

// The chain layer's conformance against the in-process test backend (fast, no sandbox process).
defineChainConformance("in-process test backend", (options) => createRuntime({ ...options, backend: createVmBackend() }));
