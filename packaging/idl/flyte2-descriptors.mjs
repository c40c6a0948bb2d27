// Writes the descriptors of Flyte 2's IDL, as published in the pinned npm package
// @flyteorg/flyteidl2, as one FileDescriptorSet that protoc reads with --descriptor_set_in.
//
// The package ships no .proto files: each protobuf-es module (*_pb.ts) embeds its file's
// descriptor, serialized and base64-encoded, with some fields stripped (the dependency list, JSON
// names). protobuf-es's own runtime (fileDesc, given the file's dependencies) restores the full
// descriptor; this script finds each module's embedded descriptor and its dependencies, lets
// fileDesc restore them, and serializes every file of the closure, dependencies first.
//
//   node flyte2-descriptors.mjs OUT.desc flyteidl2/settings/settings_service [...]
// writes OUT.desc and OUT.desc.files (the name of each file in the set, one a line).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

import { create, toBinary } from "@bufbuild/protobuf";
import { fileDesc } from "@bufbuild/protobuf/codegenv1";
import * as wkt from "@bufbuild/protobuf/wkt";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "node_modules", "@flyteorg", "flyteidl2");

const [out, ...entries] = process.argv.slice(2);
if (!out || entries.length === 0) {
  console.error("usage: node flyte2-descriptors.mjs OUT.desc MODULE... (e.g. flyteidl2/settings/settings_service)");
  process.exit(2);
}

const restored = new Map(); // module path (relative to root, no suffix) -> DescFile

// The embedded descriptor of a module and the modules (or well-known types) it depends on.
function readModule(rel) {
  const path = join(root, rel + "_pb.ts");
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`${path}: not in @flyteorg/flyteidl2 (${e.code})`);
  }
  const imports = new Map(); // identifier -> module path, or "wkt"
  for (const m of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";/gm)) {
    const from = m[2];
    for (const id of m[1].split(",").map((s) => s.trim())) {
      if (!id.startsWith("file_")) continue;
      if (from === "@bufbuild/protobuf/wkt") imports.set(id, "wkt");
      else imports.set(id, normalize(join(dirname(rel), from.replace(/_pb\.ts$/, ""))));
    }
  }
  const call = text.match(/fileDesc\("([A-Za-z0-9+/=]+)"(?:, \[([^\]]*)\])?\)/);
  if (!call) throw new Error(`${path}: no embedded file descriptor (fileDesc("…")) found`);
  const deps = (call[2] ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  return { b64: call[1], deps, imports, path };
}

function restore(rel) {
  if (restored.has(rel)) return restored.get(rel);
  const mod = readModule(rel);
  const deps = mod.deps.map((id) => {
    const from = mod.imports.get(id);
    if (from === undefined) throw new Error(`${mod.path}: dependency ${id} is not imported`);
    if (from === "wkt") {
      if (!wkt[id]) throw new Error(`${mod.path}: @bufbuild/protobuf/wkt has no ${id}`);
      return wkt[id];
    }
    return restore(from);
  });
  const file = fileDesc(mod.b64, deps);
  restored.set(rel, file);
  return file;
}

// Every file of the closure, each after its dependencies, each once.
const ordered = [];
const seen = new Set();
function visit(file) {
  if (seen.has(file.proto.name)) return;
  seen.add(file.proto.name);
  for (const dep of file.dependencies) visit(dep);
  ordered.push(file.proto);
}
for (const e of entries) visit(restore(e));

const set = create(wkt.FileDescriptorSetSchema, { file: ordered });
writeFileSync(out, toBinary(wkt.FileDescriptorSetSchema, set));
// The files of the closure, one a line, for the build to generate code for each.
writeFileSync(out + ".files", ordered.map((f) => f.name).join("\n") + "\n");
console.log(`${out}: ${ordered.length} files (${ordered.map((f) => f.name).join(", ")})`);
