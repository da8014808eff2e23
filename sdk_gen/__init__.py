"""Typed Python SDK, stub and prompt text from tool JSON Schemas.

``generate(specs)`` renders one ``async def`` per tool (keyword-only, typed, documented),
its ``.pyi`` stub, and a compact prompt for the model, plus the exact Python ↔ wire name
mapping. Importing this package is cheap. Names and prompt are made at once, without
datamodel-code-generator; module and stub (which need it: the ``types`` extra) on first use.
"""

from __future__ import annotations

from ._generate import FILES as FILES
from ._generate import GeneratedSDK as GeneratedSDK
from ._generate import Progress as Progress
from ._generate import SdkCache as SdkCache
from ._generate import generate as generate
from ._names import SdkNames as SdkNames
from ._specs import SpecLike as SpecLike
from ._specs import as_spec as as_spec

__all__ = [
    "FILES",
    "GeneratedSDK",
    "Progress",
    "SdkCache",
    "SdkNames",
    "SpecLike",
    "as_spec",
    "generate",
]
