// Compile .ksy files to Python with the Kaitai Struct compiler's JavaScript API.
// usage: node compile.mjs OUT_DIR FILE.ksy...   (prints {"file": error} JSON; exit 1 on errors)
import fs from "node:fs";
import path from "node:path";
import yaml from "js-yaml";
import KaitaiStructCompiler from "kaitai-struct-compiler";

const [outDir, ...files] = process.argv.slice(2);
const compiler = KaitaiStructCompiler;
const importer = {
  importYaml(name, mode) {
    const dir = path.dirname(files[0]);
    return Promise.resolve(yaml.load(fs.readFileSync(path.join(dir, name + ".ksy"), "utf8")));
  },
};
const errors = {};
for (const file of files) {
  try {
    const spec = yaml.load(fs.readFileSync(file, "utf8"));
    const out = await compiler.compile("python", spec, importer, false);
    for (const [name, text] of Object.entries(out)) fs.writeFileSync(path.join(outDir, name), text);
  } catch (e) {
    errors[file] = String(e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : e);
  }
}
console.log(JSON.stringify(errors));
process.exit(Object.keys(errors).length ? 1 : 0);
