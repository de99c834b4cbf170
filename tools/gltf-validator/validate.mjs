// Usage: node validate.mjs FILE...   -> one JSON line per file: {file, report} or {file, error}
import { readFile } from "node:fs/promises";
import path from "node:path";
import validator from "gltf-validator";

for (const file of process.argv.slice(2)) {
  try {
    const data = new Uint8Array(await readFile(file));
    const report = await validator.validateBytes(data, {
      uri: path.basename(file),
      maxIssues: 200,
      externalResourceFunction: (uri) =>
        readFile(path.join(path.dirname(file), decodeURIComponent(uri))).then((b) => new Uint8Array(b)),
    });
    console.log(JSON.stringify({ file, report }));
  } catch (err) {
    console.log(JSON.stringify({ file, error: String(err) }));
  }
}
