"""Every tool module, imported so that its tools register (one module per capability)."""
from braintools.tools import (  # noqa: F401
    artifacts,
    erp_studies,
    features,
    inspection,
    multimodal,
    neurocog,
    physiol,
    preparation,
    quality,
    segmentation,
    sleep,
    sleep_reports,
    statistics,
)
