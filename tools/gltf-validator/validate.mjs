// Usage: node validate.mjs FILE...
// Prints one JSON line per file: {file, report, missingImages} or {file, error}.
// Buffers are always loaded from beside the file. Images referenced by URI are checked when the
// file exists; the absent names are listed in missingImages. A GLB must be self-contained (a
// texture retromesh cannot find is embedded as a placeholder image), so its IO_ERRORs count;
// only in a .gltf, whose images are files the user may drop beside it later, are they not
// counted.
import { readFile, access } from "node:fs/promises";
import path from "node:path";
import validator from "gltf-validator";

function glbJson(data) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length < 20 || view.getUint32(0, true) !== 0x46546c67) return null;
  const len = view.getUint32(12, true);
  return JSON.parse(new TextDecoder().decode(data.subarray(20, 20 + len)));
}

async function exists(p) {
  try { await access(p); return true; } catch { return false; }
}

for (const file of process.argv.slice(2)) {
  try {
    const data = new Uint8Array(await readFile(file));
    const dir = path.dirname(file);
    const isGlb = file.toLowerCase().endsWith(".glb");
    let json = null;
    try { json = isGlb ? glbJson(data) : JSON.parse(new TextDecoder().decode(data)); } catch { json = null; }
    const imageUris = ((json && json.images) || []).map((i) => i.uri).filter((u) => u && !u.startsWith("data:"));
    const missingImages = [];
    for (const u of imageUris) if (!(await exists(path.join(dir, decodeURIComponent(u))))) missingImages.push(u);
    const load = (uri) => readFile(path.join(dir, decodeURIComponent(uri))).then((b) => new Uint8Array(b));
    const options = { uri: path.basename(file), maxIssues: 200 };
    options.externalResourceFunction = load;
    // only images can be external in our .gltf files: an absent texture is listed, not an error
    if (!isGlb && missingImages.length) options.ignoredIssues = ["IO_ERROR"];
    const report = await validator.validateBytes(data, options);
    console.log(JSON.stringify({ file, report, missingImages }));
  } catch (err) {
    console.log(JSON.stringify({ file, error: String(err) }));
  }
}
