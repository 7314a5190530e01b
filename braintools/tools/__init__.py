"""Every tool module, imported so that its tools register (one module per capability)."""
from braintools.tools import (  # noqa: F401
    artifacts,
    features,
    inspection,
    neurocog,
    physiol,
    preparation,
    segmentation,
    sleep,
    statistics,
)
