/**
 * What `muster image` does, as plain data for the front ends: build an image for container children and
 * list the ones built. The one module of the container place that front ends import (scripts/import-rules.cjs).
 */
import { engineOf } from "./engine.js";
import { type BuiltImage, buildImage, type ImageBuildOptions, type ImageRow, listImages } from "./image.js";

export type { AgentPackage, BuiltImage, ImageBuildOptions, ImageRow } from "./image.js";
export { DEFAULT_IMAGE } from "./spec.js";

/** Builds an image with the engine `env` names (MUSTER_CONTAINER_ENGINE, DOCKER_HOST…). */
export async function buildImageIn(env: NodeJS.ProcessEnv, opts: ImageBuildOptions): Promise<BuiltImage> {
  return buildImage(engineOf(env), opts);
}

/** The images muster built in the engine `env` names. */
export async function imagesIn(env: NodeJS.ProcessEnv): Promise<{ engine: string; images: ImageRow[] }> {
  const engine = engineOf(env);
  return { engine: engine.kind, images: await listImages(engine) };
}
