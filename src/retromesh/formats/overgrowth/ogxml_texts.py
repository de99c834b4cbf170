"""The descriptor texts of the sample Overgrowth character (:mod:`.ogxml_samples` lays them
out with the files they name; :func:`.samples.documents` reads the character XML alone)."""
from __future__ import annotations

__all__ = ["CHARACTER_XML", "MASS_XML", "OBJECT_XML", "RIG_XML"]

CHARACTER_XML = """<?xml version="1.0" ?>
<character>
    <appearance obj_path = "Data/Objects/Characters/stick.xml"
                skeleton = "Data/Skeletons/r_stick.xml"
                channel_0 = "cloth"
                default_scale = "1.05"/>
    <animations idle = "Data/Animations/r_wave.anm"
                movement = "Data/Animations/r_movement.xml"/>
    <team>stick</team>
    <morphs>
        <wink />
        <fist num_steps = "2"/>
        <look_u default = "true" start_x = "0" start_y = "0.6" start_z = "0"
                end_x = "0" end_y = "0.7" end_z = "0.1"/>
    </morphs>
</character>
"""

OBJECT_XML = """<?xml version="1.0" ?>
<Object>
    <Model>Data/Models/Characters/stick.obj</Model>
    <ColorMap>Data/Textures/Characters/stick_c.tga</ColorMap>
    <NormalMap>Data/Textures/Characters/stick_n.tga</NormalMap>
    <ShaderName>cubemapobjchar</ShaderName>
</Object>
"""

RIG_XML = """<?xml version="1.0" ?>
<rig bone_path = "Data/Skeletons/r_stick.phxbn"
     model_path = "Data/Models/Characters/stick.obj"
     mass_path = "Data/Skeletons/r_stick_mass.xml"/>
"""

MASS_XML = """<?xml version="1.0" ?>
<rig bone_path = "Data/Skeletons/r_stick_mass.phxbn"
     model_path = "Data/Models/Characters/stick.obj"/>
"""
