"""One module or package per format family; each registers its formats on import.

The registry imports them (see ``registry.FORMAT_MODULES``) and reads each family's
``manifest.py`` (what its formats are) without importing it. The files of a family package are
in ``README.md`` beside this file; adding a format, in ``docs/adding-a-format.md``.

``retromesh.formats()`` is part of the public API (the list of registered formats), and this
package is also ``retromesh.formats`` once a family module is imported. So that both work, the
package is callable: calling it returns :func:`retromesh.registry.formats`.
"""
from __future__ import annotations

import sys
import types


class _CallablePackage(types.ModuleType):
    def __call__(self):
        from ..registry import formats
        return formats()


sys.modules[__name__].__class__ = _CallablePackage
