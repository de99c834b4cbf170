// irrcheck: load meshes the way Luanti/Minetest's Irrlicht does and print what Irrlicht sees.
//
//   irrcheck [--triangles] FILE...
//
// One JSON object per line per FILE on stdout (flushed after each, so a caller that had to kill
// us knows which file hung): load ok/failed, mesh buffers with their materials, vertex and index
// totals, and for skinned meshes (every B3D is one) the joints with their weights and keys, the
// frame count, the animation speed and the bounding box and mean vertex of the posed mesh at
// frames 0, N/3, 2N/3 and N (N = getFrameCount()). --triangles adds every triangle's posed corners at those frames
// and, at frame 0, each corner's UVs and vertex colour. Animated meshes also get the posed box at
// every whole frame.
//
// The device is EDT_NULL: no window, no GPU. Textures named by a B3D's TEXS chunk are registered
// beforehand as 1x1 dummy images under their base names, so that Irrlicht's own loader (which
// falls back to the base name when the file is not beside the mesh) attaches them to the texture
// layers it chooses, and the layer's texture name can be reported even when the image is absent.
// Irrlicht's log lines of level warning and above are collected per file under "log".
//
// Built by tools/setup/20-irrlicht.sh against Debian's libirrlicht-dev (1.8.5).

#include <irrlicht.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace irr;

namespace {

std::vector<std::string> g_log;

class LogCatcher : public IEventReceiver {
public:
    bool OnEvent(const SEvent& event) override {
        if (event.EventType == EET_LOG_TEXT_EVENT) {
            if (event.LogEvent.Level >= ELL_WARNING && event.LogEvent.Level != ELL_NONE)
                g_log.emplace_back(event.LogEvent.Text ? event.LogEvent.Text : "");
            return true;  // never print: stdout carries JSON only
        }
        return false;
    }
};

// --- a tiny JSON writer -------------------------------------------------------------------------

std::string jstr(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c < 0x20 || c >= 0x7f) {  // bytes as latin-1 code points: lossless and valid JSON
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else out += static_cast<char>(c);
    }
    return out + "\"";
}

std::string jnum(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

std::string jbool(bool b) { return b ? "true" : "false"; }

// --- TEXS names (for the dummy textures) --------------------------------------------------------

struct TexsEntry {
    std::string name;
    s32 flags = 0, blend = 0;
};

// Reads the top-level TEXS chunks of a B3D; anything malformed just ends the scan.
std::vector<TexsEntry> scan_texs(const std::string& path) {
    std::vector<TexsEntry> out;
    std::ifstream in(path, std::ios::binary);
    std::vector<unsigned char> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto u32at = [&](size_t p) {
        return static_cast<s32>(d[p] | (d[p + 1] << 8) | (d[p + 2] << 16) | (static_cast<u32>(d[p + 3]) << 24));
    };
    if (d.size() < 12 || std::memcmp(d.data(), "BB3D", 4) != 0) return out;
    size_t end = std::min(d.size(), static_cast<size_t>(8) + static_cast<u32>(u32at(4)));
    size_t p = 12;
    while (p + 8 <= end) {
        u32 len = static_cast<u32>(u32at(p + 4));
        size_t body = p + 8, stop = body + len;
        if (stop > end || stop < body) break;
        if (std::memcmp(&d[p], "TEXS", 4) == 0) {
            size_t q = body;
            while (q < stop) {
                size_t z = q;
                while (z < stop && d[z] != 0) ++z;
                if (z + 1 + 28 > stop) break;
                TexsEntry t;
                t.name.assign(reinterpret_cast<const char*>(&d[q]), z - q);
                t.flags = u32at(z + 1);
                t.blend = u32at(z + 5);
                out.push_back(t);
                q = z + 1 + 28;
            }
        }
        p = stop;
    }
    return out;
}

std::string basename_of(const std::string& p) {
    size_t cut = p.find_last_of("/\\");
    return cut == std::string::npos ? p : p.substr(cut + 1);
}

// --- the report for one mesh --------------------------------------------------------------------

std::string bbox_json(const core::aabbox3df& b) {
    return "[" + jnum(b.MinEdge.X) + "," + jnum(b.MinEdge.Y) + "," + jnum(b.MinEdge.Z) + "," +
           jnum(b.MaxEdge.X) + "," + jnum(b.MaxEdge.Y) + "," + jnum(b.MaxEdge.Z) + "]";
}

// Mean of every vertex position (buffer transformations applied): moves when any vertex moves.
std::string centroid_json(scene::IMesh* mesh) {
    double sum[3] = {0, 0, 0};
    u32 count = 0;
    for (u32 b = 0; b < mesh->getMeshBufferCount(); ++b) {
        scene::IMeshBuffer* mb = mesh->getMeshBuffer(b);
        const core::matrix4* xf = nullptr;
        if (auto* smb = dynamic_cast<scene::SSkinMeshBuffer*>(mb))
            if (!smb->Transformation.isIdentity()) xf = &smb->Transformation;
        for (u32 v = 0; v < mb->getVertexCount(); ++v) {
            core::vector3df pos = mb->getPosition(v);
            if (xf) xf->transformVect(pos);
            sum[0] += pos.X;
            sum[1] += pos.Y;
            sum[2] += pos.Z;
            ++count;
        }
    }
    if (count == 0) return "null";
    return "[" + jnum(sum[0] / count) + "," + jnum(sum[1] / count) + "," + jnum(sum[2] / count) + "]";
}

std::string triangles_json(scene::IMesh* mesh) {
    std::string out = "[";
    bool first = true;
    for (u32 b = 0; b < mesh->getMeshBufferCount(); ++b) {
        scene::IMeshBuffer* mb = mesh->getMeshBuffer(b);
        const core::matrix4* xf = nullptr;
        if (auto* smb = dynamic_cast<scene::SSkinMeshBuffer*>(mb))
            if (!smb->Transformation.isIdentity()) xf = &smb->Transformation;
        const u16* idx = mb->getIndices();
        u32 n = mb->getIndexCount() - mb->getIndexCount() % 3;
        for (u32 i = 0; i < n; ++i) {
            u32 v = idx[i];
            core::vector3df pos = v < mb->getVertexCount() ? mb->getPosition(v) : core::vector3df(NAN, NAN, NAN);
            if (xf) xf->transformVect(pos);
            out += (first ? "" : ",") + jnum(pos.X) + "," + jnum(pos.Y) + "," + jnum(pos.Z);
            first = false;
        }
    }
    return out + "]";
}

// Frame 0's surface, corner by corner in the order of triangles_json: u, v, u2, v2 (the second UV
// set, 0 unless the buffer has two) and the vertex colour as ARGB.
std::string surface_json(scene::IMesh* mesh) {
    std::string out = "[";
    bool first = true;
    for (u32 b = 0; b < mesh->getMeshBufferCount(); ++b) {
        scene::IMeshBuffer* mb = mesh->getMeshBuffer(b);
        const u16* idx = mb->getIndices();
        u32 n = mb->getIndexCount() - mb->getIndexCount() % 3;
        for (u32 i = 0; i < n; ++i) {
            u32 v = idx[i];
            core::vector2df uv(NAN, NAN), uv2(0, 0);
            u32 argb = 0;
            if (v < mb->getVertexCount()) {
                if (mb->getVertexType() == video::EVT_2TCOORDS) {
                    const auto& vx = static_cast<const video::S3DVertex2TCoords*>(mb->getVertices())[v];
                    uv = vx.TCoords;
                    uv2 = vx.TCoords2;
                    argb = vx.Color.color;
                } else if (mb->getVertexType() == video::EVT_STANDARD) {
                    const auto& vx = static_cast<const video::S3DVertex*>(mb->getVertices())[v];
                    uv = vx.TCoords;
                    argb = vx.Color.color;
                } else {
                    uv = mb->getTCoords(v);
                }
            }
            out += (first ? "" : ",") + jnum(uv.X) + "," + jnum(uv.Y) + "," + jnum(uv2.X) + "," + jnum(uv2.Y) +
                   "," + std::to_string(argb);
            first = false;
        }
    }
    return out + "]";
}

std::string material_json(const video::SMaterial& m) {
    std::string out = "{\"type\":" + std::to_string(static_cast<int>(m.MaterialType));
    int t = static_cast<int>(m.MaterialType);
    if (t >= 0 && t < static_cast<int>(sizeof(video::sBuiltInMaterialTypeNames) / sizeof(char*)) &&
        video::sBuiltInMaterialTypeNames[t])
        out += ",\"type_name\":" + jstr(video::sBuiltInMaterialTypeNames[t]);
    out += ",\"diffuse\":" + std::to_string(m.DiffuseColor.color);
    out += ",\"ambient\":" + std::to_string(m.AmbientColor.color);
    out += ",\"shininess\":" + jnum(m.Shininess);
    out += ",\"lighting\":" + jbool(m.Lighting);
    out += ",\"zwrite\":" + jbool(m.ZWriteEnable);
    out += ",\"backface_culling\":" + jbool(m.BackfaceCulling);
    out += ",\"gouraud\":" + jbool(m.GouraudShading);
    out += ",\"color_material\":" + std::to_string(static_cast<int>(m.ColorMaterial));
    // layers up to the last one that has a texture or a non-default wrap
    u32 used = 0;
    for (u32 i = 0; i < video::MATERIAL_MAX_TEXTURES; ++i) {
        const video::SMaterialLayer& l = m.TextureLayer[i];
        if (l.Texture || l.TextureWrapU != video::ETC_REPEAT || l.TextureWrapV != video::ETC_REPEAT) used = i + 1;
    }
    out += ",\"layers\":[";
    for (u32 i = 0; i < used; ++i) {
        const video::SMaterialLayer& l = m.TextureLayer[i];
        out += i ? "," : "";
        out += "{\"texture\":";
        out += l.Texture ? jstr(basename_of(l.Texture->getName().getPath().c_str())) : "null";
        out += ",\"wrap_u\":" + std::to_string(static_cast<int>(l.TextureWrapU));
        out += ",\"wrap_v\":" + std::to_string(static_cast<int>(l.TextureWrapV)) + "}";
    }
    return out + "]}";
}

std::string report(IrrlichtDevice* device, const std::string& path, bool with_triangles) {
    scene::ISceneManager* smgr = device->getSceneManager();
    video::IVideoDriver* driver = device->getVideoDriver();
    g_log.clear();

    std::vector<TexsEntry> texs = scan_texs(path);
    for (const TexsEntry& t : texs) {
        std::string base = basename_of(t.name);
        if (base.empty() || driver->findTexture(base.c_str())) continue;
        video::IImage* img = driver->createImage(video::ECF_A8R8G8B8, core::dimension2du(1, 1));
        img->setPixel(0, 0, video::SColor(255, 255, 255, 255));
        driver->addTexture(base.c_str(), img);
        img->drop();
    }

    std::string out = "{\"file\":" + jstr(path);
    scene::IAnimatedMesh* am = smgr->getMesh(path.c_str());
    if (!am) {
        out += ",\"ok\":false";
    } else {
        out += ",\"ok\":true,\"mesh_type\":" + std::to_string(static_cast<int>(am->getMeshType()));
        scene::IMesh* mesh = am->getMesh(0);
        scene::ISkinnedMesh* sk =
            am->getMeshType() == scene::EAMT_SKINNED ? static_cast<scene::ISkinnedMesh*>(am) : nullptr;

        u32 nv = 0, ni = 0;
        std::string bufs = "[";
        for (u32 b = 0; b < mesh->getMeshBufferCount(); ++b) {
            scene::IMeshBuffer* mb = mesh->getMeshBuffer(b);
            nv += mb->getVertexCount();
            ni += mb->getIndexCount();
            bufs += (b ? "," : "");
            bufs += "{\"vertices\":" + std::to_string(mb->getVertexCount()) +
                    ",\"indices\":" + std::to_string(mb->getIndexCount()) +
                    ",\"vertex_type\":" + std::to_string(static_cast<int>(mb->getVertexType())) +
                    ",\"material\":" + material_json(mb->getMaterial()) + "}";
        }
        out += ",\"buffer_count\":" + std::to_string(mesh->getMeshBufferCount());
        out += ",\"vertices\":" + std::to_string(nv) + ",\"indices\":" + std::to_string(ni);
        out += ",\"buffers\":" + bufs + "]";
        out += ",\"frame_count\":" + std::to_string(am->getFrameCount());
        out += ",\"speed\":" + jnum(am->getAnimationSpeed());

        if (sk) {
            const core::array<scene::ISkinnedMesh::SJoint*>& joints = sk->getAllJoints();
            out += ",\"static\":" + jbool(sk->isStatic());
            out += ",\"joint_count\":" + std::to_string(sk->getJointCount()) + ",\"joints\":[";
            for (u32 j = 0; j < joints.size(); ++j) {
                const scene::ISkinnedMesh::SJoint* jt = joints[j];
                int parent = -1;
                for (u32 k = 0; k < joints.size() && parent < 0; ++k)
                    for (u32 c = 0; c < joints[k]->Children.size(); ++c)
                        if (joints[k]->Children[c] == jt) parent = static_cast<int>(k);
                double wsum = 0;
                for (u32 w = 0; w < jt->Weights.size(); ++w) wsum += jt->Weights[w].strength;
                out += (j ? "," : "");
                out += "{\"name\":" + jstr(jt->Name.c_str()) + ",\"parent\":" + std::to_string(parent) +
                       ",\"weights\":" + std::to_string(jt->Weights.size()) + ",\"weight_sum\":" + jnum(wsum) +
                       ",\"position_keys\":" + std::to_string(jt->PositionKeys.size()) +
                       ",\"rotation_keys\":" + std::to_string(jt->RotationKeys.size()) +
                       ",\"scale_keys\":" + std::to_string(jt->ScaleKeys.size()) + "}";
            }
            out += "]";
        }

        // posed mesh at 0, N/3, 2N/3, N
        f32 n = static_cast<f32>(am->getFrameCount());
        std::vector<f32> frames = {0.f};
        if (n > 0) frames = {0.f, n / 3.f, 2.f * n / 3.f, n};
        std::string fr = "[", bb = "[", tr = "[", ce = "[";
        for (size_t i = 0; i < frames.size(); ++i) {
            scene::IMesh* posed = mesh;
            core::aabbox3df box;
            if (sk) {
                sk->animateMesh(frames[i], 1.0f);
                sk->skinMesh();
                box = sk->getBoundingBox();
            } else {
                posed = am->getMesh(static_cast<s32>(frames[i]));
                box = posed->getBoundingBox();
            }
            fr += (i ? "," : "") + jnum(frames[i]);
            bb += (i ? "," : "") + bbox_json(box);
            ce += (i ? "," : "") + centroid_json(posed);
            if (with_triangles) tr += (i ? "," : "") + triangles_json(posed);
            if (with_triangles && i == 0) out += ",\"surface\":" + surface_json(posed);
        }
        out += ",\"frames\":" + fr + "],\"bbox\":" + bb + "],\"centroid\":" + ce + "]";
        if (with_triangles) out += ",\"triangles\":" + tr + "]";
        // and the posed box at every whole frame (Luanti plays frame ranges chosen by the mod)
        if (sk && n > 0) {
            std::string every = "[";
            u32 last = std::min<u32>(am->getFrameCount(), 5000);
            for (u32 f = 0; f <= last; ++f) {
                sk->animateMesh(static_cast<f32>(f), 1.0f);
                sk->skinMesh();
                every += (f ? "," : "") + bbox_json(sk->getBoundingBox());
            }
            out += ",\"bbox_every_frame\":" + every + "]";
        }
        smgr->getMeshCache()->removeMesh(am);
    }

    out += ",\"texs\":[";
    for (size_t i = 0; i < texs.size(); ++i)
        out += (i ? "," : "") + std::string("{\"name\":") + jstr(texs[i].name) +
               ",\"flags\":" + std::to_string(texs[i].flags) + ",\"blend\":" + std::to_string(texs[i].blend) + "}";
    out += "],\"log\":[";
    for (size_t i = 0; i < g_log.size(); ++i) out += (i ? "," : "") + jstr(g_log[i]);
    out += "]}";
    driver->removeAllTextures();
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    bool with_triangles = false;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--triangles") == 0) with_triangles = true;
        else if (std::strcmp(argv[i], "--version") == 0) {
            std::printf("{\"irrlicht\":%s}\n", jstr(IRRLICHT_SDK_VERSION).c_str());
            return 0;
        } else files.emplace_back(argv[i]);
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: irrcheck [--triangles] FILE...\n");
        return 2;
    }

    LogCatcher catcher;
    SIrrlichtCreationParameters params;
    params.DriverType = video::EDT_NULL;
    params.EventReceiver = &catcher;
    params.LoggingLevel = ELL_WARNING;
    IrrlichtDevice* device = createDeviceEx(params);
    if (!device) {
        std::fprintf(stderr, "irrcheck: cannot create an EDT_NULL Irrlicht device\n");
        return 3;
    }
    for (const std::string& f : files) {
        std::string line = report(device, f, with_triangles);
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
    device->drop();
    return 0;
}
