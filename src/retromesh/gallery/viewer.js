// The gallery's model viewer: three.js (npm, pinned in package.json) with its GLTFLoader and
// OrbitControls. Bundled once into one classic script (esbuild, see assets.py) so that pages
// work from file:// with no network. A page sets window.RETROMESH = {model, thumbnail} and loads
// the model's base64 script (<name>.glb.js: window.RETROMESH_GLB = "...") before this bundle.
import * as THREE from "three";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

function decode(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}

function frame(camera, controls, box) {
  const size = box.getSize(new THREE.Vector3());
  const centre = box.getCenter(new THREE.Vector3());
  const radius = Math.max(size.length() / 2, 1e-6);
  const distance = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 1.05;
  // a three-quarter view from the front (+Z) and a little above, as a person would look
  const dir = new THREE.Vector3(0.6, 0.45, 1.0).normalize();
  camera.position.copy(centre).addScaledVector(dir, distance);
  camera.lookAt(centre);
  camera.near = distance / 100;
  camera.far = distance * 100;
  camera.updateProjectionMatrix();
  if (controls) {
    controls.target.copy(centre);
    controls.update();
  }
}

function start() {
  const opts = window.RETROMESH || {};
  const container = document.getElementById("viewer");
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(container.clientWidth, container.clientHeight);
  renderer.outputColorSpace = THREE.SRGBColorSpace;
  container.appendChild(renderer.domElement);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(opts.thumbnail ? 0xf2f2f2 : 0x2b2f36);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x445566, 2.2));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(2, 4, 3);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(40, container.clientWidth / container.clientHeight, 0.01, 1000);
  const controls = opts.thumbnail ? null : new OrbitControls(camera, renderer.domElement);

  let mixer = null;
  let actions = [];
  let skeleton = null;
  const clock = new THREE.Clock();
  const status = document.getElementById("status");

  new GLTFLoader().parse(decode(window.RETROMESH_GLB || ""), "", (gltf) => {
    const root = gltf.scene;
    scene.add(root);
    root.updateMatrixWorld(true);
    frame(camera, controls, new THREE.Box3().setFromObject(root, true));
    let skinned = false;
    root.traverse((o) => { if (o.isSkinnedMesh) skinned = true; });
    if (skinned) {
      skeleton = new THREE.SkeletonHelper(root);
      skeleton.visible = false;
      scene.add(skeleton);
    }
    if (!opts.thumbnail && gltf.animations.length) {
      mixer = new THREE.AnimationMixer(root);
      actions = gltf.animations.map((clip) => mixer.clipAction(clip));
      const select = document.getElementById("animation");
      gltf.animations.forEach((clip, i) => {
        const o = document.createElement("option");
        o.value = String(i);
        o.textContent = `${clip.name || "animation " + i} (${clip.duration.toFixed(2)} s)`;
        select.appendChild(o);
      });
      select.addEventListener("change", () => play(Number(select.value)));
      play(0);
    }
    const looks = document.getElementById("variant");
    if (looks) looks.addEventListener("change", () => showVariant(gltf, Number(looks.value)));
    document.body.dataset.loaded = "1";
    if (status) status.textContent = "";
  }, (err) => {
    document.body.dataset.loaded = "error";
    if (status) status.textContent = "could not load the model: " + err;
  });

  // KHR_materials_variants (a Luanti mob's texture sets): each primitive shows the material
  // its mapping gives the variant, else its own
  function showVariant(gltf, v) {
    const parser = gltf.parser;
    gltf.scene.traverse((o) => {
      const at = o.isMesh ? parser.associations.get(o) : undefined;
      if (!at || at.meshes === undefined || at.primitives === undefined) return;
      const prim = parser.json.meshes[at.meshes].primitives[at.primitives];
      const maps = (prim.extensions || {}).KHR_materials_variants;
      let index = prim.material;
      for (const m of (maps ? maps.mappings : [])) if (m.variants.includes(v)) index = m.material;
      if (index !== undefined) parser.getDependency("material", index).then((mat) => { o.material = mat; });
    });
  }

  function play(i) {
    actions.forEach((a) => a.stop());
    if (actions[i]) actions[i].play();
  }

  const wire = document.getElementById("wireframe");
  if (wire) wire.addEventListener("change", () => {
    scene.traverse((o) => {
      if (o.isMesh) [].concat(o.material).forEach((m) => { m.wireframe = wire.checked; });
    });
  });
  const bones = document.getElementById("skeleton");
  if (bones) bones.addEventListener("change", () => { if (skeleton) skeleton.visible = bones.checked; });

  window.addEventListener("resize", () => {
    camera.aspect = container.clientWidth / container.clientHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(container.clientWidth, container.clientHeight);
  });
  let lastFrame = 0;
  const tick = () => {
    lastFrame = performance.now();
    if (mixer) mixer.update(clock.getDelta());
    if (controls) controls.update();
    renderer.render(scene, camera);
  };
  renderer.setAnimationLoop(tick);
  // a page nobody looks at gets no animation frames (a hidden tab, a headless screenshot):
  // timers keep the animation going there
  setInterval(() => { if (performance.now() - lastFrame > 100) tick(); }, 40);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
