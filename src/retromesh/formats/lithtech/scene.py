def to_scene(doc, *, source=None, **o): raise NotImplementedError
def from_scene(scene, **o): raise NotImplementedError
def structural_problems(doc): return []
