/** `muster image`: images for container children (`spawn --in container[:image]`): build, ls. */
import type { Command } from "commander";
import { agentPackages } from "../../core/catalog.js";
import { printJson, say, warn } from "../output.js";

// The container module (and what it needs) loads only in these commands.
const admin = () => import("../../place/container/admin.js");

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;

export function registerImage(program: Command): void {
  const image = program
    .command("image")
    .summary("images for container children (spawn --in container)")
    .description(
      "Images for container children: node, tmux, git, muster's part and the agent CLIs you name. Built from this machine's own files (no base image to pull), or from a base image of yours that has node 20+ and tmux. Docker or Podman (MUSTER_CONTAINER_ENGINE; DOCKER_HOST / CONTAINER_HOST pick the daemon).",
    );

  image
    .command("build")
    .description("build (or bring up to date) an image for container children")
    .option("-t, --tag <image>", "the image's name (default muster-agent:latest, what --in container runs)")
    .option(
      "--agent <names>",
      "agent CLIs to install from npm, comma-separated (pi, claude, codex, gemini, opencode; name@version for another version)",
    )
    .option(
      "--from <image>",
      "start from this base image (it needs node 20+ and tmux) instead of this machine's files",
    )
    .option("--offline", "install the agent CLIs from npm's cache only")
    .option("--json", "print one JSON document on stdout, nothing else")
    .action(
      async (flags: { tag?: string; agent?: string; from?: string; offline?: boolean; json?: boolean }) => {
        const names = (flags.agent ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
        const agents = agentPackages(names);
        const built = await (await admin()).buildImageIn(process.env, {
          ...(flags.tag ? { tag: flags.tag } : {}),
          ...(flags.from ? { from: flags.from } : {}),
          agents,
          ...(flags.offline ? { offline: true } : {}),
          say: (line) => warn(`muster: ${line}\n`),
        });
        if (flags.json) return printJson(built);
        say(
          `${built.built ? "built" : "kept"} ${built.tag} (${built.id}, ${mb(built.bytes)}) from ${built.from}: muster ${built.muster}${built.agents.length > 0 ? `, ${built.agents.join(", ")}` : ""}${built.built ? ` in ${(built.ms / 1000).toFixed(1)}s` : ""}\n`,
        );
      },
    );

  image
    .command("ls")
    .description("the images muster built")
    .option("--json", "print one JSON document on stdout, nothing else")
    .action(async (flags: { json?: boolean }) => {
      const { engine, images } = await (await admin()).imagesIn(process.env);
      if (flags.json) return printJson({ engine, images });
      if (images.length === 0) {
        say(`no images yet (${engine}); make one with: muster image build\n`);
        return;
      }
      for (const i of images)
        say(
          `${i.tag}  ${i.id}  ${mb(i.bytes)}  ${i.created.slice(0, 19)}  agents: ${i.agents.join(", ") || "-"}\n`,
        );
    });
}
