"""Every tool module, imported so that its tools register (one module per capability).

The import order is the order models see the tools in (the registry keeps registration
order, and the schemas' hash in run.json covers it): neurocog's tools come before
erp_studies', which imports neurocog."""
# isort: off
from braintools.tools import artifacts  # noqa: F401
from braintools.tools import neurocog  # noqa: F401
from braintools.tools import neurocog_trials  # noqa: F401
from braintools.tools import erp_studies  # noqa: F401
from braintools.tools import features  # noqa: F401
from braintools.tools import inspection  # noqa: F401
from braintools.tools import multimodal  # noqa: F401
from braintools.tools import physiol  # noqa: F401
from braintools.tools import physiol_windows  # noqa: F401
from braintools.tools import preparation  # noqa: F401
from braintools.tools import quality  # noqa: F401
from braintools.tools import quality_summary  # noqa: F401
from braintools.tools import segmentation  # noqa: F401
from braintools.tools import sleep  # noqa: F401
from braintools.tools import sleep_compare  # noqa: F401
from braintools.tools import sleep_detection  # noqa: F401
from braintools.tools import sleep_reports  # noqa: F401
from braintools.tools import sleep_reports_stages  # noqa: F401
from braintools.tools import statistics  # noqa: F401
# isort: on
